//! The in-memory market: every listed app, pre-lowercased for search and pre-serialized in both
//! languages, so list, search and details never touch the database. Loaded at start-up, swapped
//! whole after writes and by a periodic reload (which also picks up other instances' writes).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use axum::http::HeaderValue;
use crate::encoded::Encoded;

use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder};
use sha2::{Digest, Sha256};

use crate::db::entity::apps;
use crate::lang::Lang;
use crate::market::model::{App, AppDetails, Category, DisplayType, Filter, Offer, Shelf, Tier};
use crate::ids::AppId;

struct Entry {
    category: Category,
    display_type: DisplayType,
    tier: Tier,
    top_pick: bool,
    /// Lowercased names, English then Chinese.
    names: [String; 2],
    /// Lowercased summaries (both languages), publisher and id.
    rest: String,
    /// The answer in each language (index `Lang as usize`: en 0, zh 1) and as JSON text.
    views: [App; 2],
    json: [String; 2],
    /// The details answer (the app with its offers) in each language, and as JSON text.
    details: [AppDetails; 2],
    details_json: [String; 2],
}

pub struct Index {
    entries: Vec<Entry>,
    by_id: HashMap<AppId, usize>,
    /// Hash of every field of every listed app: equal on every instance holding the same data.
    pub fingerprint: String,
    /// Answers already made from this index, by query (it never changes: a reload builds a new
    /// index). Bounded: emptied when full.
    answers: Mutex<HashMap<AnswerKey, Arc<Answer>>>,
}

/// What an answer of the market API is kept under: its call, query and language, hashed as they
/// are (a key string made with `format!` for every request cost 4,200 of the cached list's 31,000
/// instructions).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AnswerKey {
    /// A page of `list` or `search` (`call`), under the checked filter.
    List { lang: Lang, call: &'static str, filter: Filter, offset: u64, limit: u64 },
    /// An app's details.
    App { lang: Lang, id: String },
}

/// A whole answer of the market API: the envelope as bytes (shared by every response that sends
/// it, no copy) and its tag, which changes whenever the answer would (the catalogue's
/// fingerprint, the language and the query).
pub struct Answer {
    pub etag: HeaderValue,
    /// The envelope, with its compressed forms made once each (src/encoded.rs).
    pub body: Encoded,
}

/// How many different answers one index keeps.
const ANSWERS_KEPT: usize = 512;

fn slot(lang: Lang) -> usize {
    match lang {
        Lang::En => 0,
        Lang::Zh => 1,
    }
}

impl Index {
    /// The index of the listed apps `rows` with their offers (by app id, cheapest first).
    pub fn build(rows: &[apps::Model], offers: &HashMap<AppId, Vec<Offer>>) -> Index {
        let mut hasher = Sha256::new();
        let mut entries = Vec::with_capacity(rows.len());
        let mut by_id = HashMap::with_capacity(rows.len());
        for m in rows {
            let mine = offers.get(&m.id).map(Vec::as_slice).unwrap_or_default();
            let views = [App::from_row(m, Lang::En, mine), App::from_row(m, Lang::Zh, mine)];
            let json = [
                serde_json::to_string(&views[0]).unwrap_or_default(),
                serde_json::to_string(&views[1]).unwrap_or_default(),
            ];
            let details = views.clone().map(|app| AppDetails { app, offers: mine.to_vec() });
            let details_json = [
                serde_json::to_string(&details[0]).unwrap_or_default(),
                serde_json::to_string(&details[1]).unwrap_or_default(),
            ];
            // The details hold everything the list shows, and the offers.
            hasher.update(details_json[0].as_bytes());
            hasher.update(details_json[1].as_bytes());
            by_id.insert(m.id.clone(), entries.len());
            entries.push(Entry {
                category: m.category,
                display_type: m.display_type,
                tier: m.tier,
                top_pick: m.top_pick,
                names: [m.name_en.to_lowercase(), m.name_zh.to_lowercase()],
                rest: format!("{}\n{}\n{}\n{}", m.summary_en, m.summary_zh, m.publisher, m.id).to_lowercase(),
                views,
                json,
                details,
                details_json,
            });
        }
        Index { entries, by_id, fingerprint: hex::encode(&hasher.finalize()[..12]), answers: Mutex::default() }
    }

    /// The answer to `key`, made by `data_json` (the envelope's `data`) the first time it is
    /// asked. Its tag hashes the catalogue's fingerprint and the key: the same on every instance
    /// holding the same data.
    pub fn answer(&self, key: AnswerKey, data_json: impl FnOnce(&Index) -> String) -> Arc<Answer> {
        if let Some(a) = self.answers.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return a;
        }
        let h = Sha256::digest(format!("{}|{key:?}", self.fingerprint).as_bytes());
        let etag = HeaderValue::from_str(&format!("\"m{}\"", hex::encode(&h[..12]))).expect("hex is a valid header value");
        let body = Encoded::new(format!("{{\"code\":200,\"data\":{},\"msg\":\"success\"}}", data_json(self)));
        let a = Arc::new(Answer { etag, body });
        if let Ok(mut m) = self.answers.lock() {
            if m.len() >= ANSWERS_KEPT {
                m.clear();
            }
            m.insert(key, a.clone());
        }
        a
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The positions of the apps matching `filter`, best first: without a keyword in listing
    /// order; with one, apps whose name starts with the keyword, then whose name contains every
    /// word, then the rest, each group in listing order.
    pub fn select(&self, filter: &Filter) -> Vec<usize> {
        let mut hits: Vec<(u8, usize)> = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            match filter.category {
                Some(Shelf::TopPicks) if !e.top_pick => continue,
                Some(Shelf::Category(c)) if e.category != c => continue,
                _ => {}
            }
            if filter.display_type.is_some_and(|d| e.display_type != d) || filter.tier.is_some_and(|t| e.tier != t) {
                continue;
            }
            if filter.terms.is_empty() {
                hits.push((0, i));
                continue;
            }
            let in_name = |t: &String| e.names.iter().any(|n| n.contains(t.as_str()));
            if !filter.terms.iter().all(|t| in_name(t) || e.rest.contains(t.as_str())) {
                continue;
            }
            let phrase = filter.terms.join(" ");
            let rank = if e.names.iter().any(|n| n.starts_with(&phrase)) {
                0
            } else if filter.terms.iter().all(in_name) {
                1
            } else {
                2
            };
            hits.push((rank, i));
        }
        hits.sort_by_key(|&(rank, i)| (rank, i));
        hits.into_iter().map(|(_, i)| i).collect()
    }

    /// `{"items": [...], "total": N}` of one page of a selection, as JSON text.
    pub fn page_json(&self, selection: &[usize], offset: u64, limit: u64, lang: Lang) -> String {
        let s = slot(lang);
        let page = selection.iter().skip(offset as usize).take(limit as usize);
        let mut out = String::with_capacity(64 + 900 * limit.min(selection.len() as u64) as usize);
        out.push_str("{\"items\":[");
        for (n, &i) in page.enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(&self.entries[i].json[s]);
        }
        out.push_str("],\"total\":");
        out.push_str(&selection.len().to_string());
        out.push('}');
        out
    }

    /// One page of a selection as values (for the server-rendered page state).
    pub fn page(&self, selection: &[usize], offset: u64, limit: u64, lang: Lang) -> Vec<&App> {
        let s = slot(lang);
        selection.iter().skip(offset as usize).take(limit as usize).map(|&i| &self.entries[i].views[s]).collect()
    }

    /// One app with its offers.
    pub fn get(&self, id: &AppId, lang: Lang) -> Option<&AppDetails> {
        self.by_id.get(id).map(|&i| &self.entries[i].details[slot(lang)])
    }

    pub fn get_json(&self, id: &AppId, lang: Lang) -> Option<&str> {
        self.by_id.get(id).map(|&i| self.entries[i].details_json[slot(lang)].as_str())
    }
}

/// The current index, replaced whole on reload (readers keep the one they started with).
pub struct Catalogue {
    current: RwLock<Arc<Index>>,
}

impl Catalogue {
    pub fn new(index: Index) -> Catalogue {
        Catalogue { current: RwLock::new(Arc::new(index)) }
    }

    pub fn get(&self) -> Arc<Index> {
        match self.current.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reads the listed apps and their offers from the database; swaps the index when they changed.
    /// Returns true when it did.
    pub async fn reload(&self, db: &DatabaseConnection) -> Result<bool, DbErr> {
        let index = load(db).await?;
        if index.fingerprint == self.get().fingerprint {
            return Ok(false);
        }
        let mut g = match self.current.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        *g = Arc::new(index);
        Ok(true)
    }
}

pub async fn load(db: &DatabaseConnection) -> Result<Index, DbErr> {
    let rows = apps::Entity::find()
        .filter(apps::Column::Listed.eq(true))
        .order_by_asc(apps::Column::Position)
        .order_by_asc(apps::Column::Id)
        .all(db)
        .await?;
    let offers = crate::market::offers::load(db, &rows).await?;
    Ok(Index::build(&rows, &offers))
}
