//! What a bill or an entry is for, in words a person reads: a rental names its app and device
//! ("Terraria on Alice's box"), an order its name; never a raw id. The ledger keeps only the
//! reference `(ref_type, ref_id)`; the domain that owns what it points at names it, through the
//! [`Titles`] registry assembled in server::prepare (docs/architecture.md "Registries"). A
//! reference nobody names (a grant, a top-up) has no title: its memo says it. The same domains
//! say who made a reference (`Titler::makers`: a rental's renter), which a company's bills name.

use std::collections::HashMap;
use std::sync::Arc;

use sea_orm::DatabaseExecutor;

use crate::error::AppError;
use crate::lang::Lang;
use crate::ids::UserId;

/// A domain's names for the references of one type it owns.
#[async_trait::async_trait]
pub trait Titler: Send + Sync {
    /// The `ref_type` it names ("rental", "order", "zcloud").
    fn ref_type(&self) -> &'static str;
    /// The titles in `lang` of those among `ids` it knows, by id.
    async fn titles(&self, conn: &DatabaseExecutor<'_>, ids: &[String], lang: Lang) -> Result<Vec<(String, String)>, AppError>;
    /// Who made each of those among `ids` it knows (a user id), by id: the person a company's
    /// bill names (a rental's renter). None by default.
    async fn makers(&self, _conn: &DatabaseExecutor<'_>, _ids: &[String]) -> Result<Vec<(String, UserId)>, AppError> {
        Ok(Vec::new())
    }
}

/// Every registered domain's names.
#[derive(Clone, Default)]
pub struct Titles(Arc<Vec<Arc<dyn Titler>>>);

impl Titles {
    pub fn new(titlers: Vec<Arc<dyn Titler>>) -> Self {
        Titles(Arc::new(titlers))
    }

    /// Titles of the references `(ref_type, ref_id)`, keyed `"<ref_type>:<ref_id>"`; one query
    /// per type that occurs.
    pub async fn of<'a>(&self, conn: &DatabaseExecutor<'_>, refs: impl IntoIterator<Item = (&'a str, &'a str)>, lang: Lang) -> Result<HashMap<String, String>, AppError> {
        let wanted = by_type(refs);
        let mut out = HashMap::new();
        for titler in self.0.iter() {
            let Some(ids) = wanted.get(titler.ref_type()) else { continue };
            for (id, title) in titler.titles(conn, ids, lang).await? {
                out.insert(format!("{}:{id}", titler.ref_type()), title);
            }
        }
        Ok(out)
    }

    /// Who made the references `(ref_type, ref_id)` (a user id), keyed `"<ref_type>:<ref_id>"`;
    /// one query per type that occurs and names its makers.
    pub async fn makers_of<'a>(&self, conn: &DatabaseExecutor<'_>, refs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<HashMap<String, UserId>, AppError> {
        let wanted = by_type(refs);
        let mut out = HashMap::new();
        for titler in self.0.iter() {
            let Some(ids) = wanted.get(titler.ref_type()) else { continue };
            for (id, user) in titler.makers(conn, ids).await? {
                out.insert(format!("{}:{id}", titler.ref_type()), user);
            }
        }
        Ok(out)
    }
}

fn by_type<'a>(refs: impl IntoIterator<Item = (&'a str, &'a str)>) -> HashMap<&'a str, Vec<String>> {
    let mut wanted: HashMap<&str, Vec<String>> = HashMap::new();
    for (t, id) in refs {
        wanted.entry(t).or_default().push(id.to_string());
    }
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str);

    #[async_trait::async_trait]
    impl Titler for Named {
        fn ref_type(&self) -> &'static str {
            self.0
        }
        async fn titles(&self, _conn: &DatabaseExecutor<'_>, ids: &[String], lang: Lang) -> Result<Vec<(String, String)>, AppError> {
            Ok(ids.iter().filter(|id| id.as_str() != "gone").map(|id| (id.clone(), format!("{} {id} {lang:?}", self.0))).collect())
        }
    }

    #[tokio::test]
    async fn each_type_is_named_by_its_titler_and_the_rest_have_none() {
        let db = sea_orm::Database::connect("sqlite::memory:").await.unwrap();
        let titles = Titles::new(vec![Arc::new(Named("rental")), Arc::new(Named("order"))]);
        let refs = [("rental", "r1"), ("order", "o1"), ("grant", "g1"), ("rental", "gone")];
        let got = titles.of(&(&db).into(), refs, Lang::En).await.unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got["rental:r1"], "rental r1 En");
        assert_eq!(got["order:o1"], "order o1 En");
        assert!(Titles::default().of(&(&db).into(), refs, Lang::Zh).await.unwrap().is_empty());
    }
}
