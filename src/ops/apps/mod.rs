//! Publishing apps from the operator's console (issue 25 item 3, docs/market.md "Published
//! apps"): list every app (hidden ones too), publish a new one (`origin: local`), edit any app
//! (texts, category, requirements, how it installs, listed, top pick), upload its icon and a
//! `docker save` archive of its image.
//!
//! An app's install manifest edited here is stored with the app (`apps.manifest`) and wins over
//! the built-in one; a changed manifest without a new version gets one (`<version>+r<n>`), so
//! installations show "Update available" (apps::access compares versions). Every write is
//! audited in its transaction and then reloads the market index and moves the public version
//! (`market::service::refresh`), so every instance's market pages and search show it at once.
//! The seed catalogue's merge keeps every field an operator changed (it compares values: see
//! market::seed), never touches `listed` or `manifest`, and leaves `local` apps alone.

pub mod model;
pub mod routes;
pub mod uploads;

use std::collections::HashMap;

use axum::extract::FromRef;
use sea_orm::{ActiveEnum, ActiveModelTrait, ConnectionTrait, EntityTrait, Iterable, QueryOrder};
use serde_json::{Value, json};

use crate::ids::AppId;
use crate::apps::AppsCtx;
use crate::db::entity::apps;
use crate::db::enums::values;
use crate::db::{for_update, now, write_txn};
use crate::error::{AppError, Msg};
use crate::http::List;
use crate::market::MarketCtx;
use crate::market::model::{AppFields, AppTexts, Classification, Requirements, icon_url};
use crate::ops::audit;
use crate::ops::model::{Actor, AuditAction};
use zmarket_protocol::apps::{Health, Manifest, PortSpec};

use model::{AppEdit, ArchiveInfo, ImageUpload, OpsApp, OpsPort};

/// What publishing uses: the apps' install manifests and image store, and the market to refresh.
#[derive(Clone)]
pub struct Publisher {
    pub apps: AppsCtx,
    pub market: MarketCtx,
}

impl<S> FromRef<S> for Publisher
where
    AppsCtx: FromRef<S>,
    MarketCtx: FromRef<S>,
{
    fn from_ref(state: &S) -> Publisher {
        Publisher { apps: AppsCtx::from_ref(state), market: MarketCtx::from_ref(state) }
    }
}

/// The archives the store holds, by image reference (the newest for a reference held twice).
async fn archives(conn: &impl ConnectionTrait) -> Result<HashMap<String, ArchiveInfo>, AppError> {
    let rows = crate::apps::images::list(conn).await.map_err(AppError::Internal)?;
    let mut by_tag = HashMap::new();
    for r in rows {
        for tag in serde_json::from_str::<Vec<String>>(&r.tags).unwrap_or_default() {
            by_tag.insert(tag, ArchiveInfo { sha256: r.sha256.clone(), size: r.size_bytes });
        }
    }
    Ok(by_tag)
}

fn view(row: &apps::Model, manifest: Option<&Manifest>, archives: &HashMap<String, ArchiveInfo>) -> OpsApp {
    let image = manifest.map(|m| m.image.clone()).unwrap_or_default();
    OpsApp {
        id: row.id.clone().into(),
        texts: AppTexts::from(row),
        icon_url: icon_url(&row.icon),
        class: Classification::from(row),
        publisher: row.publisher.clone(),
        version: row.version.clone(),
        requirements: Requirements::from(row),
        ports: manifest
            .map(|m| {
                m.ports.iter().map(|p| OpsPort { container: p.container, web: p.web, name: p.name.clone(), protocol: p.protocol.clone() }).collect()
            })
            .unwrap_or_default(),
        volumes: manifest.map(|m| m.volumes.clone()).unwrap_or_default(),
        health: manifest.and_then(|m| m.health.as_ref().map(|h| h.path.clone())),
        listed: row.listed,
        top_pick: row.top_pick,
        origin: row.origin.clone(),
        archive: archives.get(&image).cloned(),
        image,
        revision: row.revision,
        updated_at: row.updated_at,
    }
}

/// Every app, hidden ones too, in listing order; `q` finds part of the id or a name.
pub async fn list(cx: &Publisher, q: Option<String>, listed: Option<bool>) -> Result<List<OpsApp>, AppError> {
    let rows = apps::Entity::find().order_by_asc(apps::Column::Position).order_by_asc(apps::Column::Id).all(&cx.apps.db).await?;
    let archives = archives(&cx.apps.db).await?;
    let items: Vec<OpsApp> = rows
        .iter()
        .filter(|r| listed.is_none_or(|l| r.listed == l))
        .filter(|r| {
            q.as_deref().is_none_or(|q| [r.id.as_str(), &r.name_en, &r.name_zh].iter().any(|s| s.to_lowercase().contains(q)))
        })
        .map(|r| view(r, cx.apps.manifests.of(r).as_ref(), &archives))
        .collect();
    Ok(List { total: items.len() as u64, items })
}

pub async fn get(cx: &Publisher, id: &AppId) -> Result<OpsApp, AppError> {
    let row = apps::Entity::find_by_id(id.to_string()).one(&cx.apps.db).await?.ok_or(AppError::Refused(Msg::AppNotFound))?;
    Ok(view(&row, cx.apps.manifests.of(&row).as_ref(), &archives(&cx.apps.db).await?))
}

/// An app being edited: what the catalogue row and the install manifest will hold.
struct Draft {
    fields: AppFields,
    manifest: Option<Manifest>,
    listed: bool,
}

fn apply(d: &mut Draft, e: AppEdit) -> Result<(), AppError> {
    let f = &mut d.fields;
    e.texts.apply(&mut f.texts);
    e.class.apply(&mut f.class);
    macro_rules! set {
        ($($name:ident),*) => { $(if let Some(v) = e.$name { f.$name = v; })* };
    }
    set!(publisher, version, top_pick, requirements);
    if let Some(l) = e.listed {
        d.listed = l;
    }
    let touches_manifest = e.image.is_some() || e.ports.is_some() || e.volumes.is_some() || e.health.is_some();
    if touches_manifest && d.manifest.is_none() {
        d.manifest = Some(Manifest {
            image: String::new(),
            ports: vec![],
            env: Default::default(),
            volumes: vec![],
            gpu: false,
            health: None,
            command: None,
            live_snapshot: false,
        });
    }
    if let Some(m) = d.manifest.as_mut() {
        if let Some(image) = e.image {
            m.image = image;
        }
        if let Some(ports) = e.ports {
            m.ports = ports
                .into_iter()
                .map(|p| {
                    // A port kept from the manifest keeps its scheme.
                    let scheme = m.ports.iter().find(|o| o.container == p.container && o.protocol == p.protocol).and_then(|o| o.scheme.clone());
                    PortSpec { container: p.container, protocol: p.protocol, web: p.web, scheme, name: p.name }
                })
                .collect();
        }
        if let Some(v) = e.volumes {
            m.volumes = v;
        }
        if let Some(h) = e.health {
            m.health = h.map(|path| Health { path });
        }
        m.gpu = f.requirements.gpu_count > 0;
        if m.image.is_empty() {
            return Err(AppError::invalid("image", Msg::AppImageInvalid));
        }
        if m.health.is_some() && !m.ports.iter().any(|p| p.web) {
            return Err(AppError::invalid("health", Msg::AppHealthInvalid));
        }
        // What the agent is given must pass the same check as the built-in manifests.
        crate::apps::manifest::validate(m, f.requirements.gpu_count > 0).map_err(|e| {
            tracing::warn!(error = %e, "a published manifest failed the manifest check");
            AppError::invalid("ports", Msg::AppPortsInvalid)
        })?;
    }
    Ok(())
}

/// `1.0` → `1.0+r1` → `1.0+r2`: the version of an app whose image changed without a new one.
pub fn bump(version: &str) -> String {
    if let Some((base, n)) = version.rsplit_once("+r")
        && let Ok(n) = n.parse::<u32>()
    {
        return format!("{base}+r{}", n + 1);
    }
    format!("{version}+r1")
}

fn required<T>(v: Option<T>, field: &'static str, msg: Msg) -> Result<T, AppError> {
    v.ok_or(AppError::invalid(field, msg))
}

/// A choice POST needs, refused listing the values when it is not given.
fn chosen<T: ActiveEnum<Value = String> + Iterable>(v: Option<T>, field: &'static str) -> Result<T, AppError> {
    required(v, field, Msg::AppChoiceInvalid(field, values::<T>()))
}

/// `POST /apps`: publishes a new app (`origin: local`), listed unless `listed: false`.
pub async fn create(cx: &Publisher, actor: &Actor, e: AppEdit) -> Result<OpsApp, AppError> {
    let id = required(e.id.clone(), "id", Msg::AppIdInvalid)?;
    let requirements = required(e.requirements.clone(), "requirements", Msg::AppRequirementsInvalid)?;
    let category = chosen(e.class.category, "category")?;
    let given = e.texts.clone();
    let fields = AppFields {
        position: 0,
        texts: AppTexts {
            name_en: required(given.name_en, "name_en", Msg::AppNameInvalid)?,
            name_zh: required(given.name_zh, "name_zh", Msg::AppNameInvalid)?,
            summary_en: required(given.summary_en, "summary_en", Msg::AppSummaryInvalid)?,
            summary_zh: required(given.summary_zh, "summary_zh", Msg::AppSummaryInvalid)?,
            description_en: String::new(),
            description_zh: String::new(),
        },
        // Until an icon is uploaded: the category's.
        icon: format!("icons/category/{}.svg", category.to_value().to_ascii_lowercase()),
        class: Classification {
            category,
            display_type: chosen(e.class.display_type, "display_type")?,
            tier: chosen(e.class.tier, "tier")?,
            kind: chosen(e.class.kind, "kind")?,
        },
        price_per_hour: 0,
        publisher: required(e.publisher.clone(), "publisher", Msg::AppPublisherInvalid)?,
        version: required(e.version.clone(), "version", Msg::AppVersionInvalid)?,
        top_pick: false,
        requirements,
    };
    required(e.image.as_ref(), "image", Msg::AppImageInvalid)?;
    let mut draft = Draft { fields, manifest: None, listed: true };
    apply(&mut draft, e)?;

    let txn = write_txn(&cx.apps.db).await?;
    if apps::Entity::find_by_id(id.clone()).one(&txn).await?.is_some() {
        return Err(AppError::Refused(Msg::AppIdTaken));
    }
    let last = apps::Entity::find().order_by_desc(apps::Column::Position).one(&txn).await?;
    draft.fields.position = last.map_or(0, |a| a.position + 1);
    let at = now();
    let base = json!({
        "id": id, "listed": draft.listed, "origin": "local", "seed_version": null, "seed_fields": null,
        "manifest": manifest_json(draft.manifest.as_ref())?, "created_at": at, "updated_at": at,
    });
    let active = draft.fields.into_row(base, &[]).map_err(AppError::Internal)?;
    let row = match active.insert(&txn).await {
        Ok(row) => row,
        // Published under the same id at the same moment (PostgreSQL; SQLite's writer lock
        // already serialized the check above).
        Err(e) => {
            drop(txn);
            return Err(match apps::Entity::find_by_id(id).one(&cx.apps.db).await? {
                Some(_) => AppError::Refused(Msg::AppIdTaken),
                None => e.into(),
            });
        }
    };
    let app = view(&row, draft.manifest.as_ref(), &archives(&txn).await?);
    audit::record(&txn, actor, AuditAction::AppCreate, &target(&row.id), json!({ "after": app })).await?;
    txn.commit().await?;
    crate::market::service::refresh(&cx.market).await?;
    Ok(app)
}

fn target(id: &AppId) -> String {
    format!("app:{id}")
}

fn manifest_json(m: Option<&Manifest>) -> Result<Option<String>, AppError> {
    m.map(serde_json::to_string).transpose().map_err(|e| AppError::Internal(e.into()))
}

/// The keys of `before` and `after` (objects) whose values differ, each side's values.
fn changes(before: &OpsApp, after: &OpsApp) -> Value {
    let (Ok(Value::Object(b)), Ok(Value::Object(a))) = (serde_json::to_value(before), serde_json::to_value(after)) else { return Value::Null };
    let (mut was, mut now) = (serde_json::Map::new(), serde_json::Map::new());
    for (k, v) in a {
        if k != "updated_at" && k != "revision" && b.get(&k) != Some(&v) {
            was.insert(k.clone(), b.get(&k).cloned().unwrap_or(Value::Null));
            now.insert(k, v);
        }
    }
    json!({ "before": was, "after": now })
}

/// `PUT /apps/{id}`: the fields given change, the others stay. A changed install manifest is
/// kept with the app; without a new version it gets one (`bump`). A `revision` older than the
/// app's (it changed since the form was opened: an edit, an icon, an archive) is refused with
/// 409 `stale_edit` and changes nothing.
pub async fn update(cx: &Publisher, actor: &Actor, id: &AppId, e: AppEdit) -> Result<OpsApp, AppError> {
    if e.id.as_deref().is_some_and(|new| new != id) {
        return Err(AppError::invalid("id", Msg::AppIdInvalid));
    }
    let txn = write_txn(&cx.apps.db).await?;
    let row = for_update(&txn, apps::Entity::find_by_id(id.to_string())).one(&txn).await?.ok_or(AppError::Refused(Msg::AppNotFound))?;
    if e.revision.is_some_and(|r| r != row.revision) {
        return Err(AppError::Refused(Msg::StaleEdit));
    }
    let manifest = cx.apps.manifests.of(&row);
    let version_given = e.version.as_deref().is_some_and(|v| v != row.version);
    let mut draft = Draft { fields: AppFields::from_row(&row).map_err(AppError::Internal)?, manifest: manifest.clone(), listed: row.listed };
    apply(&mut draft, e)?;
    let manifest_changed = draft.manifest != manifest;
    if manifest_changed && !version_given {
        draft.fields.version = bump(&row.version);
    }
    let archives = archives(&txn).await?;
    let before = view(&row, manifest.as_ref(), &archives);
    let updated = write(&txn, &row, draft, manifest_changed).await?;
    let after = view(&updated, cx.apps.manifests.of(&updated).as_ref(), &archives);
    let diff = changes(&before, &after);
    if diff["after"].as_object().is_none_or(|m| m.is_empty()) {
        // Nothing changed: nothing written, nothing audited (the transaction rolls back).
        return Ok(before);
    }
    audit::record(&txn, actor, AuditAction::AppUpdate, &target(id), diff).await?;
    txn.commit().await?;
    crate::market::service::refresh(&cx.market).await?;
    Ok(after)
}

/// Writes a draft over its row: the catalogue's fields, `listed`, and the manifest when it
/// changed (a seed app's unchanged manifest stays the built-in one); moves the revision.
async fn write(conn: &impl ConnectionTrait, row: &apps::Model, d: Draft, manifest_changed: bool) -> Result<apps::Model, AppError> {
    let mut base = serde_json::to_value(row).map_err(|e| AppError::Internal(e.into()))?;
    base["listed"] = json!(d.listed);
    base["updated_at"] = json!(now());
    base["revision"] = json!(row.revision + 1);
    if manifest_changed {
        base["manifest"] = json!(manifest_json(d.manifest.as_ref())?);
    }
    let active = d.fields.into_row(base, &["listed", "manifest", "updated_at", "revision"]).map_err(AppError::Internal)?;
    Ok(active.update(conn).await?)
}

/// `POST /apps/{id}/icon`: a PNG, JPEG or WebP of at most 256 KB, kept in the database and
/// served by the market at a URL that changes with it.
pub async fn set_icon(cx: &Publisher, actor: &Actor, id: &AppId, bytes: Vec<u8>) -> Result<OpsApp, AppError> {
    if bytes.is_empty() {
        return Err(AppError::invalid("file", Msg::AppIconMissing));
    }
    if bytes.len() > model::ICON_MAX_BYTES {
        return Err(AppError::Refused(Msg::AppIconTooLarge));
    }
    let mime = match infer::get(&bytes).map(|k| k.mime_type()) {
        Some(m @ ("image/png" | "image/jpeg" | "image/webp")) => m,
        _ => return Err(AppError::Refused(Msg::AppIconType)),
    };
    use sha2::Digest;
    let version = hex::encode(sha2::Sha256::digest(&bytes))[..16].to_string();
    let txn = write_txn(&cx.apps.db).await?;
    let row = for_update(&txn, apps::Entity::find_by_id(id.to_string())).one(&txn).await?.ok_or(AppError::Refused(Msg::AppNotFound))?;
    let icon = crate::market::icons::path(id, &version);
    crate::market::icons::save(&txn, id, mime, bytes, version).await?;
    let mut fields = AppFields::from_row(&row).map_err(AppError::Internal)?;
    let before = icon_url(&row.icon);
    fields.icon = icon;
    let manifest = cx.apps.manifests.of(&row);
    let updated = write(&txn, &row, Draft { fields, manifest, listed: row.listed }, false).await?;
    audit::record(&txn, actor, AuditAction::AppIcon, &target(id), json!({ "before": before, "after": icon_url(&updated.icon) })).await?;
    let app = view(&updated, cx.apps.manifests.of(&updated).as_ref(), &archives(&txn).await?);
    txn.commit().await?;
    crate::market::service::refresh(&cx.market).await?;
    Ok(app)
}

/// `POST /apps/{id}/image`, once the archive is received and checked: stores it with the image
/// archives (`zmarket images add`'s store), and makes the app install the image it holds (its
/// image stays when the archive holds it; otherwise the archive's first image, which is a
/// change of manifest and so of version).
pub async fn add_image(cx: &Publisher, actor: &Actor, id: &AppId, upload: uploads::Received) -> Result<ImageUpload, AppError> {
    let archive = upload.checked().await?;
    let txn = write_txn(&cx.apps.db).await?;
    let row = for_update(&txn, apps::Entity::find_by_id(id.to_string())).one(&txn).await?.ok_or(AppError::Refused(Msg::AppNotFound))?;
    let manifest = cx.apps.manifests.of(&row);
    let current = manifest.as_ref().map(|m| m.image.clone()).unwrap_or_default();
    let image = if archive.tags.contains(&current) { current } else { archive.tags.iter().find(|t| crate::apps::manifest::valid_image(t)).cloned().ok_or(AppError::Refused(Msg::ImageArchiveInvalid))? };
    let stored = upload.store(&txn, &cx.apps.data_dir, archive).await?;
    let mut draft = Draft { fields: AppFields::from_row(&row).map_err(AppError::Internal)?, manifest: manifest.clone(), listed: row.listed };
    apply(&mut draft, AppEdit { image: Some(image.clone()), ..Default::default() })?;
    let manifest_changed = draft.manifest != manifest;
    if manifest_changed {
        draft.fields.version = bump(&row.version);
    }
    let archives = archives(&txn).await?;
    let before = view(&row, manifest.as_ref(), &archives);
    let updated = write(&txn, &row, draft, manifest_changed).await?;
    let after = view(&updated, cx.apps.manifests.of(&updated).as_ref(), &archives);
    let mut detail = changes(&before, &after);
    detail["archive"] = json!({ "sha256": stored.sha256, "size": stored.size_bytes, "tags": serde_json::from_str::<Value>(&stored.tags).unwrap_or(Value::Null) });
    audit::record(&txn, actor, AuditAction::AppImage, &target(id), detail).await?;
    txn.commit().await?;
    if manifest_changed {
        crate::market::service::refresh(&cx.market).await?;
    }
    Ok(ImageUpload { sha256: stored.sha256, size: stored.size_bytes as u64, image })
}

#[cfg(test)]
mod tests {
    use super::bump;

    #[test]
    fn a_version_is_bumped_by_revision() {
        assert_eq!(bump("1.0"), "1.0+r1");
        assert_eq!(bump("1.0+r1"), "1.0+r2");
        assert_eq!(bump("2+rc"), "2+rc+r1");
    }
}
