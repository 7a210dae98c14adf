use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use zmarket::config::{Config, Overrides};

#[derive(Parser)]
#[command(name = "zmarket", version, about = "Self-hosted marketplace and console for shared computing")]
struct Cli {
    /// Configuration file (default: ./config.toml when present).
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Address to listen on; wins over the file and the environment.
    #[arg(long, global = true, value_name = "ADDR:PORT")]
    bind: Option<SocketAddr>,
    /// Data directory; wins over the file and the environment.
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web app and the API (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Print the OpenAPI document (what /api/openapi.json serves) as pretty JSON.
    Openapi,
    /// Run the device agent on this machine, reporting to a zmarket server
    /// (`agent doctor`: check what the box needs, changing nothing).
    Agent {
        #[command(subcommand)]
        check: Option<AgentCheck>,
        /// The server's base URL, e.g. http://market.example:8080
        #[arg(long)]
        server: Option<String>,
        /// Z-BOX, P-BOX or "server group".
        #[arg(long = "type", default_value = "Z-BOX")]
        device_type: String,
        #[arg(long)]
        name: Option<String>,
        /// Where the device id and secret are kept.
        #[arg(long, default_value = "./agent-state")]
        state_dir: PathBuf,
        /// Program that creates and deletes Z-CLOUD machines (wins over `[agent] provisioner`).
        #[arg(long, value_name = "PATH")]
        provisioner: Option<PathBuf>,
        /// Seconds between heartbeats until the server names its own interval.
        #[arg(long, default_value_t = 30)]
        heartbeat_secs: u64,
        /// The market's registration token, when it requires one (wins over `[agent] registration_token`).
        #[arg(long, env = "ZMARKET_AGENT_REGISTRATION_TOKEN", hide_env_values = true)]
        registration_token: Option<String>,
        /// Where people reach this box's apps (wins over `[agent] public_host`).
        #[arg(long, value_name = "HOST")]
        public_host: Option<String>,
        /// The pairing code to register with (the bind page's, from its install line); default:
        /// the market makes one.
        #[arg(long, env = "ZMARKET_AGENT_PAIRING_CODE", hide_env_values = true)]
        pairing_code: Option<String>,
    },
    /// A local port that carries TCP through the market to a port of an app you run or rent
    /// (`--app`) or of your own box (`--device`), e.g. `ssh -p 2222 root@127.0.0.1` after it.
    Tunnel {
        /// The market's base URL, e.g. https://market.example
        #[arg(long)]
        server: String,
        /// An API key (`zk_…`, made on the account page) or an access token.
        #[arg(long, env = "ZMARKET_KEY", hide_env_values = true)]
        key: String,
        #[arg(long, value_name = "ID")]
        app: Option<String>,
        #[arg(long, value_name = "ID")]
        device: Option<String>,
        /// The port on the far side (one the app declares, or one the box allows, e.g. 22).
        #[arg(long)]
        port: u16,
        /// Where to listen here.
        #[arg(long, default_value = "127.0.0.1:2222")]
        local: String,
    },
    /// The operator's coins: `coins grant --email E --amount N [--memo M]`, `coins codes --amount N --count K`.
    Coins {
        #[command(subcommand)]
        command: CoinsCommand,
    },
    /// Who runs the market: `operator grant --email E`, `operator revoke --email E`.
    Operator {
        #[command(subcommand)]
        command: OperatorCommand,
    },
    /// The wallet ledger: `ledger verify` checks every invariant.
    Ledger {
        #[command(subcommand)]
        command: LedgerCommand,
    },
    /// A consistent copy of the SQLite database, made while the server runs (PostgreSQL: use pg_dump).
    Backup {
        /// Where to write it (replaced only once the copy is complete), e.g. /srv/backups/zmarket.sqlite3.
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
    },
    /// Put a copy made by `zmarket backup` in place of the SQLite database (the server stopped); the
    /// database it replaces is kept as `<name>.before-restore-<time>`.
    Restore {
        /// The copy, checked first (a zmarket database, undamaged, a schema this binary knows).
        file: PathBuf,
    },
    /// Image archives the server holds for agents (a market without internet installs from them).
    Images {
        #[command(subcommand)]
        action: ImagesAction,
    },
}

#[derive(Subcommand)]
enum AgentCheck {
    /// Checks Docker, the NVIDIA runtime, free disk, the clock against the market, the market's
    /// reachability and the channel: one line each with what to do; exit 1 when one fails.
    Doctor {
        /// The market (default: the one the state directory's agent registered with).
        #[arg(long)]
        server: Option<String>,
        #[arg(long, default_value = "./agent-state")]
        state_dir: PathBuf,
    },
}

#[derive(Subcommand)]
enum CoinsCommand {
    /// Credit coins to the account with this email (prints its new balance).
    Grant {
        #[arg(long)]
        email: String,
        /// Coins, e.g. 12.50.
        #[arg(long, allow_hyphen_values = true)]
        amount: String,
        #[arg(long, default_value = "")]
        memo: String,
    },
    /// Print new top-up codes, one a line (people redeem them on the wallet's top-up page).
    Codes {
        /// Coins each code is worth, e.g. 50 or 12.50.
        #[arg(long, allow_hyphen_values = true)]
        amount: String,
        #[arg(long, default_value_t = 1)]
        count: u32,
        /// Last valid day (UTC), e.g. 2026-12-31, or an RFC 3339 time; none: valid until used.
        #[arg(long)]
        expires: Option<String>,
    },
}

#[derive(Subcommand)]
enum OperatorCommand {
    /// Make the account with this email an operator (the `/operator` pages).
    Grant {
        #[arg(long)]
        email: String,
    },
    /// Take the operator's role back (the market keeps at least one operator).
    Revoke {
        #[arg(long)]
        email: String,
    },
}

#[derive(Subcommand)]
enum LedgerCommand {
    /// Check every invariant of the ledger; exits non-zero naming the first breach.
    Verify,
}

#[derive(Subcommand)]
enum ImagesAction {
    /// Add a `docker save` archive (copied into the data directory).
    Add {
        /// The archive, e.g. made with `docker save grafana/grafana:11.5.0 -o grafana.tar`.
        file: PathBuf,
    },
    /// List the archives by digest with the images they hold.
    List,
}

/// glibc raises its mmap threshold to the size of the largest block freed (up to 32 MiB), so
/// after the first password hash every 19 MiB Argon2 block came from the heap and stayed there:
/// a sign-up flood left the process at ~420 MB with only two hashes ever running (issue 16,
/// finding 2; bench/flood.py). A fixed threshold keeps large blocks mapped and returns them to
/// the system when freed (the same flood peaks at ~75 MB).
///
/// Fixing the mmap threshold also fixes glibc's trim threshold at its 128 KiB default (it no
/// longer follows the mmap threshold up): every time a tunnel's 64 KiB frames were freed, the
/// top of the heap went back to the system and the next frames faulted it in again, about
/// 12,000 page faults and about 30 % of the CPU of the market and of the agent per 100 MB
/// (issue 42 item 3, `perf stat`). An arena keeps up to 4 MiB free at its top instead: more
/// than a stream's largest window (2 MiB), the bytes a tunnel holds in flight.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn return_large_blocks_to_the_system() {
    // SAFETY: mallopt only sets allocator parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 * 1024 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn return_large_blocks_to_the_system() {}

fn main() -> ExitCode {
    return_large_blocks_to_the_system();
    // Before the configuration derives the connection cap from it (issue 29, finding 7).
    let open_files = zmarket::config::raise_open_file_limit();
    let cli = Cli::parse();
    let overrides = Overrides { bind: cli.bind, data_dir: cli.data_dir.clone() };
    let config = match Config::load(cli.config.as_deref(), &overrides) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("zmarket: {e}");
            return ExitCode::from(2);
        }
    };
    // Held to the end of `main`: dropping it writes the lines still waiting.
    let _log = zmarket::telemetry::init(&config.log);
    match open_files {
        Some((_, now)) if now < zmarket::config::LOW_OPEN_FILE_LIMIT => tracing::warn!(
            open_files = now,
            connections = config.connection_cap(),
            "the open-file limit is low (raise the hard limit, e.g. LimitNOFILE= in the systemd unit): few connections can be served"
        ),
        Some((before, now)) if now > before => tracing::info!(before, now, "raised the soft open-file limit to the hard one"),
        _ => {}
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("zmarket: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command.unwrap_or(Command::Serve) {
            Command::Serve => serve(config).await,
            Command::Migrate => {
                let db = zmarket::db::connect(&config).await?;
                zmarket::db::migrate(&db).await?;
                println!("migrations applied");
                Ok(())
            }
            Command::Coins { command: CoinsCommand::Grant { email, amount, memo } } => {
                println!("{}", zmarket::ops::cli::coins_grant(&config, &email, &amount, &memo).await?);
                Ok(())
            }
            Command::Operator { command: OperatorCommand::Grant { email } } => {
                println!("{}", zmarket::ops::cli::set(&config, &email, true).await?);
                Ok(())
            }
            Command::Operator { command: OperatorCommand::Revoke { email } } => {
                println!("{}", zmarket::ops::cli::set(&config, &email, false).await?);
                Ok(())
            }
            Command::Coins { command: CoinsCommand::Codes { amount, count, expires } } => {
                println!("{}", zmarket::ops::cli::coins_codes(&config, &amount, count, expires.as_deref()).await?);
                Ok(())
            }
            Command::Ledger { command: LedgerCommand::Verify } => {
                println!("{}", zmarket::billing::cli::verify(&config).await?);
                Ok(())
            }
            Command::Openapi => {
                let mut doc = zmarket::app::api().split_for_parts().1;
                zmarket::openapi::complete(&mut doc);
                println!("{}", doc.to_pretty_json()?);
                Ok(())
            }
            Command::Images { action } => images(&config, action).await,
            Command::Backup { to } => {
                println!("{}", zmarket::ops::backup::backup(&config, &to).await?);
                Ok(())
            }
            Command::Restore { file } => {
                println!("{}", zmarket::ops::backup::restore(&config, &file).await?);
                Ok(())
            }
            Command::Tunnel { server, key, app, device, port, local } => {
                zmarket_agent::tunnel::run(zmarket_agent::tunnel::TunnelOptions { server, key, app, device, port, local }).await
            }
            Command::Agent { check: Some(AgentCheck::Doctor { server, state_dir }), .. } => {
                let opts = zmarket_agent::doctor::DoctorOptions { server, state_dir, docker_socket: config.agent.docker_socket.clone() };
                if zmarket_agent::doctor::run(opts).await? { Ok(()) } else { Err(anyhow::anyhow!("a check failed: see the lines marked FAIL")) }
            }
            Command::Agent { check: None, server, device_type, name, state_dir, provisioner, heartbeat_secs, registration_token, public_host, pairing_code } => {
                let Some(server) = server else { anyhow::bail!("--server is required: zmarket agent --server https://your-market") };
                let registration_token = registration_token.or_else(|| {
                    let t = config.agent.registration_token.trim();
                    (!t.is_empty()).then(|| t.to_string())
                });
                let provisioner = provisioner.or_else(|| {
                    let p = config.agent.provisioner.trim();
                    (!p.is_empty()).then(|| PathBuf::from(p))
                });
                zmarket_agent::run(zmarket_agent::AgentOptions {
                    server,
                    device_type,
                    name,
                    state_dir,
                    provisioner,
                    heartbeat_secs,
                    registration_token,
                    registry_mirror: config.agent.registry_mirror.clone(),
                    docker_socket: config.agent.docker_socket.clone(),
                    public_host: public_host.unwrap_or_else(|| config.agent.public_host.clone()),
                    tcp_ports: config.agent.tcp_ports.clone(),
                    pairing_code,
                })
                .await
            }
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("zmarket: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn images(config: &Config, action: ImagesAction) -> anyhow::Result<()> {
    let db = zmarket::db::connect(config).await?;
    zmarket::db::migrate(&db).await?;
    match action {
        ImagesAction::Add { file } => {
            let m = zmarket::apps::images::add(&db, &config.data_dir, &file).await?;
            println!("sha256:{} {} bytes {}", m.sha256, m.size_bytes, m.tags);
        }
        ImagesAction::List => {
            for m in zmarket::apps::images::list(&db).await? {
                println!("sha256:{} {} bytes {}", m.sha256, m.size_bytes, m.tags);
            }
        }
    }
    Ok(())
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let bind = config.server.bind;
    let shutdown = zmarket::server::shutdown_signal();
    let state = zmarket::server::prepare(config).await?;
    let listener = tokio::net::TcpListener::bind(bind).await.map_err(|e| anyhow::anyhow!("cannot listen on {bind}: {e}"))?;
    tracing::info!("listening on http://{}", listener.local_addr()?);
    zmarket::server::serve(listener, state, shutdown).await
}
