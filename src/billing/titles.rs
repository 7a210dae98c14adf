//! What a bill or an entry is for, in words a person reads: a rental names its app and device
//! ("Terraria on Alice's box"), an order its name; never a raw id. Read from the rows the
//! references point at (the entities are foundation; the ledger keeps only the reference).

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::db::entity::{apps, devices, installations, orders, zcloud_rentals};
use crate::error::AppError;
use crate::lang::Lang;

/// Titles of the references `(ref_type, ref_id)` that name something: rentals (and own
/// installations) and orders. Others (grants, top-ups) have none: their memo says it.
pub async fn titles<'a>(conn: &impl ConnectionTrait, refs: impl IntoIterator<Item = (&'a str, &'a str)>, lang: Lang) -> Result<HashMap<String, String>, AppError> {
    let (mut rentals, mut order_ids, mut machines) = (Vec::new(), Vec::new(), Vec::new());
    for (t, id) in refs {
        match t {
            "rental" => rentals.push(id.to_string()),
            "order" => order_ids.push(id.to_string()),
            "zcloud" => machines.push(id.to_string()),
            _ => {}
        }
    }
    let mut out = HashMap::new();
    if !rentals.is_empty() {
        let rows = installations::Entity::find().filter(installations::Column::Id.is_in(rentals)).all(conn).await?;
        let app_ids: Vec<String> = rows.iter().map(|r| r.app_id.clone()).collect();
        let device_ids: Vec<String> = rows.iter().map(|r| r.device_id.clone()).collect();
        let app_names: HashMap<String, String> = apps::Entity::find()
            .filter(apps::Column::Id.is_in(app_ids))
            .all(conn)
            .await?
            .into_iter()
            .map(|a| (a.id, if lang == Lang::Zh && !a.name_zh.is_empty() { a.name_zh } else { a.name_en }))
            .collect();
        let device_names: HashMap<String, String> =
            devices::Entity::find().filter(devices::Column::Id.is_in(device_ids)).all(conn).await?.into_iter().map(|d| (d.id, d.name)).collect();
        for r in rows {
            let app = app_names.get(&r.app_id).cloned().unwrap_or_else(|| r.app_id.clone());
            let title = match device_names.get(&r.device_id) {
                Some(d) if lang == Lang::Zh => format!("{app}（{d}）"),
                Some(d) => format!("{app} on {d}"),
                None => app,
            };
            out.insert(format!("rental:{}", r.id), title);
        }
    }
    if !machines.is_empty() {
        for z in zcloud_rentals::Entity::find().filter(zcloud_rentals::Column::Id.is_in(machines)).all(conn).await? {
            let title = if lang == Lang::Zh { format!("Z-CLOUD 云主机：{}", z.name) } else { format!("Z-CLOUD machine: {}", z.name) };
            out.insert(format!("zcloud:{}", z.id), title);
        }
    }
    if !order_ids.is_empty() {
        for o in orders::Entity::find().filter(orders::Column::Id.is_in(order_ids)).all(conn).await? {
            let title = if lang == Lang::Zh { format!("订单：{}", o.name) } else { format!("Order: {}", o.name) };
            out.insert(format!("order:{}", o.id), title);
        }
    }
    Ok(out)
}
