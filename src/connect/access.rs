//! Who may open what on a box: the installation's owner or renter, the admin of its company,
//! and a company member the app is assigned to (the same rule as seeing it, apps::access). No
//! HTTP types here.

use std::sync::Arc;

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::devices::model::DeviceId;
use crate::ids::InstallationId;
use crate::apps::model::{AppStatus, Manifest};
use crate::connect::ConnectCtx;
use crate::connect::hub::Link;
use crate::db::entity::{apps, devices, installations};
use crate::db::enums::DeviceStatus;
use crate::error::{AppError, Msg};
use crate::iam::auth::Auth;
use zmarket_protocol::frames::CloseReason;

/// An installation the caller may reach, with what reaching it needs.
pub struct Door {
    pub row: installations::Model,
    pub manifest: Option<Manifest>,
    pub device: Option<devices::Model>,
}

/// The installation `id` as the caller may reach it: 404 when they cannot see it, 403 for a
/// member of its company it is not assigned to.
pub async fn door(cx: &ConnectCtx, auth: &Auth, id: &InstallationId) -> Result<Door, AppError> {
    let row = match crate::apps::access::visible(&cx.db, auth, id).await {
        Ok((row, _)) => row,
        Err(e) if e.status() == axum::http::StatusCode::NOT_FOUND => {
            if let Some(company) = auth.company().filter(|_| !auth.is_admin()) {
                let theirs = installations::Entity::find_by_id(id.to_string())
                    .filter(installations::Column::OwnerCompanyId.eq(company))
                    .one(&cx.db)
                    .await?;
                if theirs.is_some() {
                    return Err(AppError::Refused(Msg::NoPermissionApps));
                }
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let device = devices::Entity::find_by_id(row.device_id.clone()).one(&cx.db).await?;
    let app = apps::Entity::find_by_id(row.app_id.clone()).one(&cx.db).await?;
    let manifest = app.and_then(|a| cx.apps.manifests.of(&a));
    Ok(Door { row, manifest, device })
}

impl Door {
    /// Whether the box is online now (its status and a channel on some instance).
    pub fn device_online(&self) -> bool {
        self.device.as_ref().is_some_and(|d| d.status == DeviceStatus::Online && d.channel_instance.is_some())
    }

    /// The device's channel on this instance; 409 "The device is offline" otherwise.
    pub fn link(&self, cx: &ConnectCtx) -> Result<Arc<Link>, AppError> {
        device_link(cx, self.device.as_ref().ok_or(AppError::Refused(Msg::DeviceOffline))?)
    }

    /// The app runs (a terminal, a port, the web interface need it); while it is updated the
    /// running version serves until the new one takes over.
    pub fn running(&self) -> Result<(), AppError> {
        if matches!(self.row.status, AppStatus::Running | AppStatus::Updating) { Ok(()) } else { Err(AppError::Refused(Msg::AppNotRunning)) }
    }

    /// Its container exists (logs can be read of a stopped app).
    pub fn has_container(&self) -> bool {
        // The agent creates the container at the end of `installing` (after the image is pulled
        // or loaded) and removes it when an install fails to start: logs asked for in those
        // states answered 404 (the operator-apps spec caught it during an archive's load).
        !matches!(
            self.row.status,
            AppStatus::NotInstall
                | AppStatus::Preparing
                | AppStatus::Downloading
                | AppStatus::Installing
                | AppStatus::InstallFailed
                | AppStatus::RentFailed
                | AppStatus::Deleting
                | AppStatus::Uninstalling
        )
    }

    /// The container port of the app's web interface.
    pub fn web_port(&self) -> Option<u16> {
        self.manifest.as_ref()?.ports.iter().find(|p| p.web && p.protocol == "tcp").map(|p| p.container)
    }

    /// The TCP ports the manifest declares.
    pub fn tcp_ports(&self) -> Vec<u16> {
        self.manifest.as_ref().map(|m| m.ports.iter().filter(|p| p.protocol == "tcp").map(|p| p.container).collect()).unwrap_or_default()
    }
}

/// A device the caller owns (in the current context; 403 for a member, 404 otherwise), for the
/// doors of the box itself.
pub async fn owned_device(cx: &ConnectCtx, auth: &Auth, id: &DeviceId) -> Result<devices::Model, AppError> {
    let owner = crate::devices::access::manager(auth)?;
    devices::Entity::find_by_id(id.to_string())
        .filter(crate::devices::access::owned_by(&owner))
        .one(&cx.db)
        .await?
        .ok_or(AppError::Refused(Msg::DeviceNotFound))
}

/// The device's channel on this instance; 409 "The device is offline" otherwise.
pub fn device_link(cx: &ConnectCtx, d: &devices::Model) -> Result<Arc<Link>, AppError> {
    if d.status != DeviceStatus::Online {
        return Err(AppError::Refused(Msg::DeviceOffline));
    }
    cx.channels.get(d.id.as_str()).ok_or(AppError::Refused(Msg::DeviceOffline))
}

/// A stream that could not open, as the market answers it (the API and an app's origin alike).
pub fn stream_refused(reason: CloseReason) -> AppError {
    match reason {
        CloseReason::TooMany => AppError::Refused(Msg::TooManyStreams),
        CloseReason::ChannelLost => AppError::Refused(Msg::DeviceOffline),
        CloseReason::NotFound => AppError::Refused(Msg::StreamEnded("not_found")),
        CloseReason::PortNotAllowed => AppError::invalid("port", Msg::PortNotAllowed),
        other => AppError::Refused(Msg::StreamEnded(reason_name(other))),
    }
}

/// The stable name of a close reason (its serde name).
pub fn reason_name(reason: CloseReason) -> &'static str {
    use CloseReason as R;
    match reason {
        R::Done => "done",
        R::NotFound => "not_found",
        R::NotRunning => "not_running",
        R::PortNotAllowed => "port_not_allowed",
        R::Refused => "refused",
        R::DockerUnavailable => "docker_unavailable",
        R::TooMany => "too_many",
        R::Protocol => "protocol",
        R::ChannelLost => "channel_lost",
        R::Failed => "failed",
    }
}
