//! Start-up and shutdown of `zmarket serve`, shared by the binary and the integration tests.

use std::future::Future;
use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;

use crate::app;
use crate::billing::BillingCtx;
use crate::billing::idempotency::IdempotencyStore;
use crate::companies::CompaniesCtx;
use crate::config::Config;
use crate::apps::AppsCtx;
use crate::devices::DevicesCtx;
use crate::devices::agent_api::AgentListeners;
use crate::iam::IamCtx;
use crate::iam::auth::Sessions;
use crate::iam::deletion::DeletionChecks;
use crate::iam::password::Hasher;
use crate::iam::ratelimit::Limits;
use crate::iam::tokens::Keys;
use crate::mail::Mailer;
use crate::market::MarketCtx;
use crate::notifications::{NotificationsCtx, StatsSources};
use crate::orders::OrdersCtx;
use crate::public::PublicData;
use crate::settings::{LiveSettings, MarketSettings};
use crate::social::SocialCtx;
use crate::ssr::Ssr;
use crate::ssr::data::PageSources;
use crate::state::{AppState, StateParts};

/// Everything start-up does before accepting connections: data dir, secret, database and
/// migrations, state.
pub async fn prepare(config: Config) -> anyhow::Result<AppState> {
    if let Some(w) = config.public_url_warning() {
        tracing::warn!("{w}");
    }
    crate::secrets::private_dir(&config.data_dir).with_context(|| format!("creating data dir {}", config.data_dir.display()))?;
    let secret = crate::secrets::jwt_secret(&config)?;
    // Held until the state is dropped: a restore refuses meanwhile (and a server does not open a
    // database that is being restored).
    let in_use = match crate::db::backup::sqlite_file(&config) {
        Ok(Some(file)) => Some(crate::db::backup::InUse::shared(&file)?),
        _ => None,
    };
    let db = crate::db::connect(&config).await.context("connecting to the database")?;
    crate::db::migrate(&db).await.context("running migrations")?;
    let catalogue = crate::market::seed::embedded_catalogue()?;
    let seeded = crate::market::seed::apply(&db, &catalogue).await.context("loading the app catalogue")?;
    if !seeded.skipped {
        tracing::info!(inserted = seeded.inserted, updated = seeded.updated, kept_fields = seeded.kept_fields, "app catalogue applied");
    }
    let manifests_file = Some(config.apps.manifests.trim()).filter(|p| !p.is_empty()).map(std::path::PathBuf::from);
    let manifests = crate::apps::manifest::load(&crate::apps::manifest::embedded()?, manifests_file.as_deref(), &catalogue)
        .context("checking the install manifests")?;
    let market = crate::market::index::load(&db).await.context("loading the market")?;
    let market_settings = LiveSettings::new(MarketSettings::from_config(&config));
    market_settings.reload(&db).await.context("reading the market's settings")?;
    let mailer = Mailer::new(db.clone(), &config.mail, config.mail_dir())?;
    let versions_reader = crate::db::connect_reader(&config).await.context("opening the versions' connection")?;
    let versions = crate::versions::Versions::with_reader(db.clone(), versions_reader);
    let public = PublicData::new(Some(versions.clone()));
    let keys = Arc::new(Keys::new(&secret));
    let site = Arc::new(config.site());

    // Each domain's context: what its rules use.
    let market = MarketCtx {
        db: db.clone(),
        catalogue: Arc::new(crate::market::index::Catalogue::new(market)),
        market_settings: market_settings.clone(),
        public: public.clone(),
    };
    let devices = DevicesCtx::new(
        db.clone(),
        &config.devices,
        (config.map.default_lat, config.map.default_lng),
        public.clone(),
        AgentListeners(Arc::new(vec![
            Arc::new(crate::apps::reports::AppsListener),
            Arc::new(crate::apps::reports::SnapshotsListener { keep_ended_days: config.apps.keep_ended_days }),
        ])),
        crate::devices::guards::DeviceGuards::new(vec![Arc::new(crate::apps::lite::LiteAppRules)]),
        market_settings.clone(),
        crate::devices::install::Installer::new(&config),
    );
    let apps = AppsCtx {
        db: db.clone(),
        settings: Arc::new(config.apps.clone()),
        manifests: Arc::new(manifests),
        data_dir: config.data_dir.clone(),
        market_settings: market_settings.clone(),
        reservations: crate::apps::reservations::DeviceReservations::new(vec![Arc::new(crate::orders::OrderReservations)]),
        public: public.clone(),
        offers: Arc::new(crate::apps::rental::OfferAnswers::new(crate::apps::rental::OFFER_ANSWERS_KEPT)),
    };
    let orders = OrdersCtx {
        db: db.clone(),
        settings: Arc::new(config.orders.clone()),
        apps: apps.clone(),
        market_settings: market_settings.clone(),
        public: public.clone(),
        map_centre: (config.map.default_lat, config.map.default_lng),
    };
    let companies = CompaniesCtx {
        db: db.clone(),
        site: site.clone(),
        mailer: mailer.clone(),
        invitation_ttl_secs: config.auth.invitation_ttl_secs,
        resources: crate::companies::resources::Resources::new(vec![
            Arc::new(crate::devices::binding::CompanyDevices),
            Arc::new(crate::market::apps::CompanyApps),
            Arc::new(crate::apps::AiComputeHeld),
        ]),
    };
    // The cross-domain questions, answered by the domains that know.
    let deletion = DeletionChecks::new(vec![
        Arc::new(crate::devices::binding::DevicesLinked),
        Arc::new(crate::billing::BalanceOutstanding),
        Arc::new(crate::companies::CompaniesJoined),
        Arc::new(crate::apps::AppsRented),
    ]);
    let on_verified = crate::iam::signup::VerifiedHooks::new(vec![Arc::new(crate::billing::SignupBonus(market_settings.clone()))]);
    let stats = StatsSources::new(vec![Arc::new(crate::companies::MemberRecordsUnread), Arc::new(crate::social::PendingFriendRequests)]);
    let documents = crate::ssr::documents::Documents::new(&config.data_dir, &config.product_name);
    let pages = PageSources::new(vec![Arc::new(devices.clone()), Arc::new(market.clone()), Arc::new(orders.clone()), Arc::new(documents)]);

    let iam = IamCtx {
        db: db.clone(),
        settings: Arc::new(config.auth.clone()),
        site,
        mailer: mailer.clone(),
        keys: keys.clone(),
        limiter: Arc::new(Limits::from_config(db.clone(), &config.auth)),
        hasher: Hasher::new(config.auth.hash_concurrency, std::time::Duration::from_millis(config.auth.hash_wait_ms)),
        deletion,
        on_verified,
        versions: versions.clone(),
        profiles: Arc::new(crate::iam::account::Profiles::new(crate::iam::account::PROFILES_KEPT)),
        market_settings: market_settings.clone(),
    };
    let billing = BillingCtx {
        db: db.clone(),
        settings: Arc::new(config.billing.clone()),
        market_settings: market_settings.clone(),
        mailer: mailer.clone(),
        public_url: config.server.public_url.clone(),
        titles: crate::billing::titles::Titles::new(vec![
            Arc::new(crate::apps::RentalTitles),
            Arc::new(crate::orders::OrderTitles),
            Arc::new(crate::devices::rental::ZcloudTitles),
        ]),
        redeem_limits: Arc::new(crate::billing::limits::RedeemLimits::from_config(db.clone(), &config.auth)),
        step_up: crate::iam::two_factor::StepUp { db: db.clone(), limiter: iam.limiter.clone(), threshold: config.auth.two_factor_step_up },
    };
    let idempotency = IdempotencyStore::new(db.clone(), keys.clone(), config.server.body_limit_bytes);
    let ssr = Arc::new(Ssr::new(&config, public.clone(), market_settings.clone(), pages));
    let social = SocialCtx {
        db: db.clone(),
        settings: Arc::new(config.social.clone()),
        hub: crate::events::hub::Hub::new(config.social.streams_per_user),
    };
    let sessions = Sessions::new(keys, db.clone(), versions.clone(), market_settings.clone());
    let connect = crate::connect::ConnectCtx::new(
        db.clone(),
        devices.clone(),
        apps.clone(),
        sessions.clone(),
        &config.connect,
        &config.public_url(),
        &secret,
        &config.database_url(),
        &crate::connect::internal_url(&config.connect, config.server.bind),
    );
    let ops = crate::ops::OpsCtx { db: db.clone(), market_settings: market_settings.clone(), data_dir: config.data_dir.clone() };
    Ok(AppState::new(StateParts {
        config: Arc::new(config),
        sessions,
        notifications: NotificationsCtx::new(db.clone(), stats, versions.clone()),
        ops,
        market_settings,
        in_use,
        db,
        mailer,
        public,
        ssr,
        iam,
        companies,
        devices,
        apps,
        orders,
        market,
        billing,
        idempotency,
        social,
        connect,
    }))
}

/// Serves until `shutdown` resolves, then finishes in-flight requests and stops the jobs.
pub async fn serve(listener: TcpListener, state: AppState, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    let mut jobs = crate::schedule::start(&state).await.context("starting background jobs")?;
    let poll = std::time::Duration::from_millis(state.config.social.poll_ms);
    let events = crate::events::hub::start(state.social.hub.clone(), state.db.clone(), state.config.database_url(), poll);
    let limits = crate::listener::ConnLimits::from_config(&state.config);
    let warm = crate::ssr::keep_warm(state.ssr.clone());
    let commands = crate::connect::channel::start_watcher(state.connect.clone());
    let rights = crate::connect::rights::start_watcher(state.connect.clone());
    let flusher = crate::connect::channel::start_flusher(state.connect.clone());
    let devices = state.devices.clone();
    let router = app::router(state);
    crate::listener::serve(listener, router, limits, shutdown).await;
    warm.abort();
    events.abort();
    commands.abort();
    rights.abort();
    flusher.abort();
    // The presence of the last quiet beats (src/devices/quiet.rs).
    if let Err(e) = crate::devices::quiet::flush(&devices).await {
        tracing::warn!(error = %e, "writing the boxes' presence failed");
    }
    let _ = jobs.shutdown().await;
    Ok(())
}

/// Resolves on SIGINT or SIGTERM. The handlers are installed when this is called (before the
/// listener is bound), so a signal that arrives during start-up is not lost.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    #[cfg(unix)]
    let int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    async move {
        #[cfg(unix)]
        {
            let term = async {
                match term {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            let int = async {
                match int {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! { _ = term => {}, _ = int => {} }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down");
    }
}
