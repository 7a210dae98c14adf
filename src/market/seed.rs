//! Loads the seed catalogue (`assets/catalogue/apps.json`, embedded) into the `apps` table at
//! start-up. The rule (docs/market.md): a catalogue whose hash was already applied is skipped
//! with one read; otherwise, in one transaction, new apps are inserted and known apps get a
//! three-way update per field: a field still holding what the catalogue last wrote takes the new
//! catalogue value; a field someone changed keeps their value.

use std::collections::HashMap;

use anyhow::{Context, bail};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DatabaseConnection, EntityTrait, Set};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::db::entity::{apps, market_catalogue};
use crate::market::model::{AppFields, CatalogueFile, SeedApp};
use crate::ids::AppId;

/// The catalogue embedded in the binary.
pub fn embedded_catalogue() -> anyhow::Result<String> {
    let file = crate::ssr::bundle::Assets::get("catalogue/apps.json").context("assets/catalogue/apps.json is embedded")?;
    String::from_utf8(file.data.into_owned()).context("apps.json is UTF-8")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SeedReport {
    /// The catalogue was already applied: nothing was read beyond one row.
    pub skipped: bool,
    pub inserted: usize,
    pub updated: usize,
    /// Fields left as a person changed them.
    pub kept_fields: usize,
}

/// Applies a catalogue file (its JSON text) to the database.
pub async fn apply(db: &DatabaseConnection, json: &str) -> anyhow::Result<SeedReport> {
    let hash = hex::encode(Sha256::digest(json.as_bytes()));
    if stored_hash(db).await? == hash {
        return Ok(SeedReport { skipped: true, ..Default::default() });
    }
    let file: CatalogueFile = serde_json::from_str(json).context("parsing the app catalogue")?;
    validate(&file)?;

    let txn = crate::db::write_txn(db).await?;
    // Holds the catalogue row for the transaction, so instances starting together on PostgreSQL
    // apply it once (SQLite's BEGIN IMMEDIATE already serializes writers).
    txn.execute_unprepared("UPDATE market_catalogue SET format_version = format_version WHERE id = 1").await?;
    if stored_hash(&txn).await? == hash {
        txn.commit().await?;
        return Ok(SeedReport { skipped: true, ..Default::default() });
    }
    let existing: HashMap<AppId, apps::Model> =
        apps::Entity::find().all(&txn).await?.into_iter().map(|m| (m.id.clone(), m)).collect();
    let now = crate::db::now();
    let mut report = SeedReport::default();
    for (i, app) in file.apps.iter().enumerate() {
        let new = AppFields::from_seed(app, i as i32);
        let new_json = serde_json::to_string(&new)?;
        match existing.get(&AppId::from(&app.slug)) {
            None => {
                let base = json!({
                    "id": app.slug, "listed": true, "origin": "seed", "seed_version": app.version,
                    "seed_fields": new_json, "created_at": now, "updated_at": now,
                });
                new.into_row(base, &[])?.insert(&txn).await?;
                report.inserted += 1;
            }
            // An app added locally under a slug the catalogue later uses stays the local one.
            Some(row) if row.origin != "seed" => {}
            Some(row) => {
                let current = AppFields::from_row(row)?;
                let last: Option<AppFields> = row.seed_fields.as_deref().and_then(|s| serde_json::from_str(s).ok());
                let (merged, kept) = merge(&current, last.as_ref(), &new)?;
                if merged == current && last.as_ref() == Some(&new) {
                    continue;
                }
                let mut base = serde_json::to_value(row)?;
                base["seed_version"] = json!(app.version);
                base["seed_fields"] = json!(new_json);
                base["updated_at"] = json!(now);
                base["revision"] = json!(row.revision + 1);
                merged.into_row(base, &["seed_version", "seed_fields", "updated_at", "revision"])?.update(&txn).await?;
                report.updated += 1;
                report.kept_fields += kept;
            }
        }
    }
    market_catalogue::ActiveModel {
        id: Set(1),
        hash: Set(hash),
        format_version: Set(file.version),
        applied_at: Set(Some(now)),
    }
    .update(&txn)
    .await?;
    txn.commit().await?;
    Ok(report)
}

async fn stored_hash<C: ConnectionTrait>(db: &C) -> anyhow::Result<String> {
    Ok(market_catalogue::Entity::find_by_id(1).one(db).await?.map(|m| m.hash).unwrap_or_default())
}

/// Three-way merge per field: `current` (the row), `last` (what the catalogue wrote last time),
/// `new` (the catalogue now). Without `last`, every field that differs counts as changed by a
/// person. Returns the merged fields and how many were kept as a person left them.
pub fn merge(current: &AppFields, last: Option<&AppFields>, new: &AppFields) -> anyhow::Result<(AppFields, usize)> {
    let cur = serde_json::to_value(current)?;
    let new_v = serde_json::to_value(new)?;
    let last_v = last.map(serde_json::to_value).transpose()?;
    let (Value::Object(cur), Value::Object(new_v)) = (cur, new_v) else { bail!("fields serialize to objects") };
    let mut out = serde_json::Map::new();
    let mut kept = 0;
    for (k, new_value) in new_v {
        let cur_value = cur.get(&k).cloned().unwrap_or(Value::Null);
        let untouched = match &last_v {
            Some(Value::Object(l)) => l.get(&k) == Some(&cur_value),
            _ => cur_value == new_value,
        };
        if untouched {
            out.insert(k, new_value);
        } else {
            if cur_value != new_value {
                kept += 1;
            }
            out.insert(k, cur_value);
        }
    }
    Ok((serde_json::from_value(Value::Object(out))?, kept))
}

/// The checks a catalogue must pass before anything is written (a broken catalogue stops
/// start-up with a message naming the app).
pub fn validate(file: &CatalogueFile) -> anyhow::Result<()> {
    let mut seen = std::collections::HashSet::new();
    for a in &file.apps {
        let ok_slug = !a.slug.is_empty()
            && a.slug.len() <= 64
            && a.slug.split('-').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
        if !ok_slug {
            bail!("catalogue app {:?}: the slug must be lowercase-kebab", a.slug);
        }
        if !seen.insert(a.slug.as_str()) {
            bail!("catalogue app {:?} appears twice", a.slug);
        }
        check_app(a).with_context(|| format!("catalogue app {:?}", a.slug))?;
    }
    Ok(())
}

/// What the parse does not check (an unknown category, display type, tier or kind already failed
/// it, naming the known ones).
fn check_app(a: &SeedApp) -> anyhow::Result<()> {
    if a.name.en.trim().is_empty() || a.name.zh.trim().is_empty() {
        bail!("a name is empty");
    }
    let r = &a.requirements;
    if a.price_per_hour < 0 || r.cpu_cores < 0 || r.memory_bytes < 0 || r.disk_bytes < 0 || r.gpu_count < 0 {
        bail!("negative price or requirement");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_category_tier_or_kind_fails_the_parse_naming_the_known_ones() {
        let good: Value = serde_json::from_str(&embedded_catalogue().unwrap()).unwrap();
        assert!(serde_json::from_value::<CatalogueFile>(good.clone()).is_ok());
        for (field, bad, known) in [("category", "Toys", "Z-CLOUD"), ("tier", "gold", "standard"), ("kind", "lease", "rent")] {
            let mut file = good.clone();
            file["apps"][0][field] = json!(bad);
            let err = serde_json::from_value::<CatalogueFile>(file).unwrap_err().to_string();
            assert!(err.contains(&format!("unknown variant `{bad}`")) && err.contains(known), "{field}: {err}");
        }
    }

    /// `apps.seed_fields` as a database written before the fields were grouped holds it: one flat
    /// object, keyed by the column names, in this order.
    const STORED: &str = r#"{"position":3,"name_en":"Wiki","name_zh":"维基","summary_en":"A wiki","summary_zh":"一个维基","description_en":"","description_zh":"页面","icon":"icons/apps/wiki.svg","category":"Work","display_type":"Server","tier":"basic","kind":"own","price_per_hour":5,"publisher":"Acme","version":"1.0","top_pick":true,"cpu_cores":2,"memory_bytes":268435456,"disk_bytes":1073741824,"gpu_count":1,"cuda":"12.4"}"#;

    #[test]
    fn stored_seed_fields_are_read_into_their_groups_and_written_back_byte_for_byte() {
        use crate::market::model::{AppKind, Category};
        let fields: AppFields = serde_json::from_str(STORED).unwrap();
        assert_eq!((fields.position, fields.texts.summary_zh.as_str(), fields.texts.description_zh.as_str()), (3, "一个维基", "页面"));
        assert_eq!((fields.class.category, fields.class.kind, fields.publisher.as_str(), fields.top_pick), (Category::Work, AppKind::Own, "Acme", true));
        assert_eq!((fields.requirements.gpu_count, fields.requirements.cuda.as_deref()), (1, Some("12.4")));
        assert_eq!(serde_json::to_string(&fields).unwrap(), STORED);
        // Written before `cuda` was a field: read as none.
        let older = STORED.replace(r#","cuda":"12.4""#, "");
        let fields: AppFields = serde_json::from_str(&older).unwrap();
        assert_eq!(fields.requirements.cuda, None);
        assert_eq!(serde_json::to_string(&fields).unwrap(), older.replace("}", r#","cuda":null}"#));
    }

    #[test]
    fn the_catalogue_writes_its_seed_fields_with_the_same_keys() {
        let file: CatalogueFile = serde_json::from_str(&embedded_catalogue().unwrap()).unwrap();
        let Value::Object(written) = serde_json::to_value(AppFields::from_seed(&file.apps[0], 0)).unwrap() else { panic!("an object") };
        let Value::Object(stored) = serde_json::from_str::<Value>(STORED).unwrap() else { panic!("an object") };
        assert_eq!(written.keys().collect::<Vec<_>>(), stored.keys().collect::<Vec<_>>());
        assert!(written.values().all(|v| !v.is_object()), "flat: {written:?}");
    }
}
