//! People as the other areas see them: an id, a name, an email and an avatar, found by id or by
//! email. Identity owns the `users` table; companies, billing, orders and social read a person
//! through these functions, never through the table (docs/architecture.md "Who owns which table").
//! The avatar's bytes are never read here.

use std::collections::HashMap;

use sea_orm::sea_query::{Query, SelectStatement};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use crate::db::entity::users;
use crate::error::AppError;
use crate::ids::UserId;

/// A person as others are shown them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub id: UserId,
    pub name: String,
    pub email: String,
    /// 0 without an avatar; it moves each time the picture changes.
    pub avatar_version: i32,
}

impl Person {
    /// The avatar's URL (empty without one), `iam::model::avatar_path`.
    pub fn avatar_url(&self) -> String {
        crate::iam::model::avatar_path(&self.id, self.avatar_version)
    }
}

type Row = (String, String, String, i32);

fn columns() -> sea_orm::Select<users::Entity> {
    users::Entity::find().select_only().columns([users::Column::Id, users::Column::Name, users::Column::Email, users::Column::AvatarVersion])
}

fn person((id, name, email, avatar_version): Row) -> Person {
    Person { id: id.into(), name, email, avatar_version }
}

/// The people among `ids` that exist, by id, read in one query (none for no ids).
pub async fn by_ids<I, S>(conn: &impl ConnectionTrait, ids: I) -> Result<HashMap<UserId, Person>, AppError>
where
    I: IntoIterator<Item = S>,
    S: Into<UserId>,
{
    let ids: Vec<UserId> = ids.into_iter().map(Into::into).collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<Row> = columns().filter(users::Column::Id.is_in(ids)).into_tuple().all(conn).await?;
    Ok(rows.into_iter().map(person).map(|p| (p.id.clone(), p)).collect())
}

/// The person with id `id`, if there is one.
pub async fn one(conn: &impl ConnectionTrait, id: &UserId) -> Result<Option<Person>, AppError> {
    let row: Option<Row> = columns().filter(users::Column::Id.eq(id)).into_tuple().one(conn).await?;
    Ok(row.map(person))
}

/// The person whose account has the address `email` (as stored: lower-case, `iam::model::Email`).
pub async fn by_email(conn: &impl ConnectionTrait, email: &str) -> Result<Option<Person>, AppError> {
    let row: Option<Row> = columns().filter(users::Column::Email.eq(email)).into_tuple().one(conn).await?;
    Ok(row.map(person))
}

/// Person `user_id`'s address as a subquery, for a count that must not read it first (the stats
/// poll counts everything in one statement).
pub fn email_of(user_id: &UserId) -> SelectStatement {
    Query::select().column(users::Column::Email).from(users::Entity).and_where(users::Column::Id.eq(user_id)).to_owned()
}
