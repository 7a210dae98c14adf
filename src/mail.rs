//! Outgoing mail. Requests only enqueue a message (a row in `mail_outbox`, in the caller's
//! transaction); delivery happens in the background: right after the request through `wake()`,
//! and again by the retry job for anything still due. With SMTP configured the message is sent
//! (lettre, STARTTLS or implicit TLS); without it (the default) it is written to
//! `<data_dir>/mail/` as one `.eml` file and its link is logged, so a local user can finish
//! sign-up without a mail server.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use chrono::Duration;
use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Body, Mailbox, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};
use sea_orm::sea_query::Expr;

use crate::config::MailConfig;
use crate::db::entity::mail_outbox as outbox;
use crate::db::enums::MailStatus;
use crate::db::{new_id, now};

/// How long a claimed message may stay `sending` before another worker may retry it: longer
/// than an SMTP exchange may take (`SMTP_TIMEOUT`), short enough that a message whose sender
/// was killed goes out again within seconds. A message sent twice keeps its Message-ID
/// (derived from its row), so a receiving server and mail clients see one message.
const CLAIM_SECS: i64 = 30;
const SMTP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

#[derive(Clone)]
pub struct Mailer {
    inner: Arc<Inner>,
}

struct Inner {
    db: DatabaseConnection,
    from: Mailbox,
    max_attempts: i32,
    dir: PathBuf,
    smtp: Option<AsyncSmtpTransport<Tokio1Executor>>,
}

/// A message to send.
pub struct Mail<'a> {
    pub to: &'a str,
    pub subject: &'a str,
    pub body: &'a str,
    /// The one link the recipient should open; logged when mail goes to files.
    pub link: Option<&'a str>,
}

impl Mailer {
    pub fn new(db: DatabaseConnection, cfg: &MailConfig, dir: PathBuf) -> anyhow::Result<Self> {
        let from: Mailbox = cfg.from.parse().context("mail.from")?;
        let smtp = if cfg.smtp_host.is_empty() {
            None
        } else {
            let builder = match cfg.smtp_security.as_str() {
                "tls" => AsyncSmtpTransport::<Tokio1Executor>::relay(&cfg.smtp_host).context("mail.smtp_host")?,
                "starttls" => {
                    AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&cfg.smtp_host).context("mail.smtp_host")?
                }
                _ => AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&cfg.smtp_host),
            };
            let mut builder = builder.port(cfg.smtp_port).timeout(Some(SMTP_TIMEOUT));
            if !cfg.smtp_username.is_empty() {
                builder = builder.credentials(Credentials::new(cfg.smtp_username.clone(), cfg.smtp_password.clone()));
            }
            Some(builder.build())
        };
        Ok(Mailer { inner: Arc::new(Inner { db, from, max_attempts: cfg.max_attempts as i32, dir, smtp }) })
    }

    /// Queues a message inside the caller's transaction. Call `wake()` after it commits.
    pub async fn enqueue(&self, conn: &impl ConnectionTrait, mail: Mail<'_>) -> Result<(), sea_orm::DbErr> {
        let t = now();
        outbox::ActiveModel {
            id: Set(new_id()),
            to_addr: Set(mail.to.to_string()),
            subject: Set(mail.subject.to_string()),
            body_text: Set(mail.body.to_string()),
            link: Set(mail.link.map(str::to_string)),
            status: Set(MailStatus::Pending),
            attempts: Set(0),
            last_error: Set(None),
            next_attempt_at: Set(t),
            created_at: Set(t),
            sent_at: Set(None),
        }
        .insert(conn)
        .await?;
        Ok(())
    }

    /// Delivers what is due now, in the background.
    pub fn wake(&self) {
        let me = self.clone();
        tokio::spawn(async move {
            if let Err(e) = me.deliver_due().await {
                tracing::warn!(error = %e, "mail delivery pass failed");
            }
        });
    }

    /// Claims and delivers every due message; returns how many were delivered.
    pub async fn deliver_due(&self) -> anyhow::Result<usize> {
        let db = &self.inner.db;
        let due = outbox::Entity::find()
            .filter(outbox::Column::Status.is_in([MailStatus::Pending, MailStatus::Sending]))
            .filter(outbox::Column::NextAttemptAt.lte(now()))
            .order_by_asc(outbox::Column::CreatedAt)
            .limit(50)
            .all(db)
            .await?;
        let mut delivered = 0;
        for msg in due {
            // Claim it: only one worker (of possibly several instances) wins.
            let claimed = outbox::Entity::update_many()
                .col_expr(outbox::Column::Status, Expr::value(MailStatus::Sending))
                .col_expr(outbox::Column::NextAttemptAt, (now() + Duration::seconds(CLAIM_SECS)).into())
                .filter(outbox::Column::Id.eq(msg.id.clone()))
                .filter(outbox::Column::Status.eq(msg.status))
                .filter(outbox::Column::NextAttemptAt.eq(msg.next_attempt_at))
                .exec(db)
                .await?;
            if claimed.rows_affected != 1 {
                continue;
            }
            let attempts = msg.attempts + 1;
            let result = self.deliver(&msg).await;
            let mut row: outbox::ActiveModel = msg.clone().into();
            row.attempts = Set(attempts);
            match result {
                Ok(()) => {
                    row.status = Set(MailStatus::Sent);
                    row.sent_at = Set(Some(now()));
                    row.last_error = Set(None);
                    delivered += 1;
                }
                Err(e) => {
                    tracing::warn!(mail_id = %msg.id, attempts, error = %e, "mail delivery failed");
                    row.last_error = Set(Some(format!("{e:#}")));
                    if attempts >= self.inner.max_attempts {
                        row.status = Set(MailStatus::Failed);
                    } else {
                        row.status = Set(MailStatus::Pending);
                        // 30 s, 1 min, 2 min, ... capped at one hour.
                        let backoff = (30i64 << (attempts - 1).min(7)).min(3600);
                        row.next_attempt_at = Set(now() + Duration::seconds(backoff));
                    }
                }
            }
            row.update(db).await?;
        }
        Ok(delivered)
    }

    async fn deliver(&self, msg: &outbox::Model) -> anyhow::Result<()> {
        let to: Mailbox = msg.to_addr.parse().context("recipient address")?;
        // 8bit keeps the text (and its link) readable in the .eml file; lettre wants CRLF lines.
        let text = msg.body_text.replace("\r\n", "\n").replace('\n', "\r\n");
        // (lettre would pick base64 for text that is mostly Chinese; 8bit is valid whenever no
        // line is longer than 998 bytes and there is no NUL.)
        let eight_bit_ok = !text.contains('\0') && text.split("\r\n").all(|l| l.len() <= 998);
        let body = if eight_bit_ok {
            Body::dangerous_pre_encoded(text.into_bytes(), ContentTransferEncoding::EightBit)
        } else {
            Body::new(text)
        };
        let domain = self.inner.from.email.domain().to_string();
        let message = Message::builder()
            .message_id(Some(format!("<{}@{domain}>", msg.id)))
            .from(self.inner.from.clone())
            .to(to)
            .subject(msg.subject.clone())
            .singlepart(SinglePart::builder().header(ContentType::TEXT_PLAIN).body(body))
            .context("building the message")?;
        match &self.inner.smtp {
            Some(transport) => {
                transport.send(message).await.context("SMTP")?;
                tracing::info!(mail_id = %msg.id, "mail sent over SMTP");
            }
            None => {
                let path = self.write_file(msg, &message.formatted()).await?;
                // The link itself is a credential: the log names where it is, not what it is.
                tracing::info!(
                    mail_id = %msg.id,
                    to = %msg.to_addr,
                    file = %path.display(),
                    link = %redacted(msg.link.as_deref().unwrap_or("")),
                    "mail written to file (no SMTP configured)"
                );
            }
        }
        Ok(())
    }

    async fn write_file(&self, msg: &outbox::Model, bytes: &[u8]) -> anyhow::Result<PathBuf> {
        let dir = &self.inner.dir;
        crate::secrets::private_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
        let name = format!("{}-{}.eml", msg.created_at.format("%Y%m%dT%H%M%S"), msg.id);
        let tmp = dir.join(format!(".{name}.tmp"));
        let path = dir.join(name);
        // Mails hold live links: readable by this user only.
        let mut opts = tokio::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        opts.mode(0o600);
        let mut file = opts.open(&tmp).await.with_context(|| format!("writing {}", tmp.display()))?;
        tokio::io::AsyncWriteExt::write_all(&mut file, bytes).await.with_context(|| format!("writing {}", tmp.display()))?;
        file.sync_all().await?;
        tokio::fs::rename(&tmp, &path).await?;
        Ok(path)
    }
}

/// A link with its query's values cut (`…/email-verified?token=…`): enough to tell which
/// mail it was, useless to open.
fn redacted(link: &str) -> String {
    match link.split_once('?') {
        Some((base, query)) => {
            let keys: Vec<String> = query.split('&').map(|kv| format!("{}=…", kv.split('=').next().unwrap_or(""))).collect();
            format!("{base}?{}", keys.join("&"))
        }
        None => link.to_string(),
    }
}
