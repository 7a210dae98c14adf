//! The signed-in menu of docs/product.md §2/§3, per userType. Entries flagged `isHide` are routes the
//! UI registers but does not show in the menu. `meta.title` is a title key the UI translates.

use crate::iam::auth::UserType;
use crate::iam::model::{MenuEntry, MenuMeta};

struct Item {
    path: &'static str,
    name: &'static str,
    component: &'static str,
    icon: &'static str,
    title: &'static str,
    hidden: bool,
    parent: Option<&'static str>,
}

const fn item(path: &'static str, name: &'static str, component: &'static str, icon: &'static str, title: &'static str) -> Item {
    Item { path, name, component, icon, title, hidden: false, parent: None }
}

const fn hidden(parent: &'static str, path: &'static str, name: &'static str, component: &'static str, title: &'static str) -> Item {
    Item { path, name, component, icon: "", title, hidden: true, parent: Some(parent) }
}

/// Every entry in menu order.
const ITEMS: &[Item] = &[
    item("/app", "App", "app", "app", "z_app"),
    hidden("/app", "/app/details", "AppDetails", "app/details", "app_details"),
    hidden("/app", "/app/aicompute", "AiCompute", "app/aicompute", "ai_compute"),
    item("/devices", "Devices", "devices", "devices", "devices"),
    hidden("/devices", "/devices/link", "DeviceLink", "devices/link", "link_device"),
    hidden("/devices", "/devices/details", "DeviceDetails", "devices/details", "device_details"),
    hidden("/devices", "/devices/zcloud/create", "ZcloudCreate", "devices/zcloud/create", "create_zcloud"),
    item("/company", "Company", "company", "company", "company"),
    hidden("/company", "/company/allocate", "CompanyAllocate", "company/allocate", "allocate"),
    hidden("/company", "/company/history", "CompanyHistory", "company/history", "company_history"),
    item("/friends", "Friends", "friends", "friends", "friends"),
    hidden("/friends", "/friends/tags", "FriendTags", "friends/tags", "friend_tags"),
    item("/wallet", "Wallet", "wallet", "wallet", "wallet"),
    hidden("/wallet", "/wallet/top-up", "WalletTopUp", "wallet/top-up", "top_up"),
    item("/account", "Account", "account", "account", "account"),
    hidden("/account", "/account/username", "AccountUsername", "account/username", "change_username"),
    hidden("/account", "/account/password", "AccountPassword", "account/password", "change_password"),
    item("/messages", "Messages", "messages", "messages", "messages"),
    item("/demands-and-offers", "DemandsAndOffers", "demands-and-offers", "demands", "demands_and_offers"),
    item("/history", "History", "history", "history", "my_company_history"),
    item("/operator", "Operator", "operator", "operator", "operator"),
    hidden("/operator", "/operator/people", "OperatorPeople", "operator/people", "operator_people"),
    hidden("/operator", "/operator/audit", "OperatorAudit", "operator/audit", "operator_audit"),
    hidden("/operator", "/operator/apps", "OperatorApps", "operator/apps", "operator_apps"),
    hidden("/operator", "/operator/settings", "OperatorSettings", "operator/settings", "operator_settings"),
    hidden("/operator", "/operator/codes", "OperatorCodes", "operator/codes", "operator_codes"),
];

/// The operator's pages (personal context, `users.operator`), after the userType's own.
const OPERATOR: [&str; 6] = [
    "/operator",
    "/operator/people",
    "/operator/audit",
    "/operator/apps",
    "/operator/settings",
    "/operator/codes",
];

const APP_PAGES: [&str; 2] = ["/app/details", "/app/aicompute"];
const ACCOUNT: [&str; 3] = ["/account", "/account/username", "/account/password"];
const DEVICES: [&str; 4] = ["/devices", "/devices/link", "/devices/details", "/devices/zcloud/create"];

/// The paths each userType may open (docs/product.md §2's table).
pub fn paths_for(user_type: UserType, operator: bool) -> Vec<&'static str> {
    let mut paths = vec!["/app"];
    paths.extend(ACCOUNT);
    match user_type {
        UserType::User => {
            // /app/details and /app/aicompute: docs/product.md §2's hidden children of /app (issue 13).
            paths.extend(APP_PAGES);
            paths.extend(DEVICES);
            // /friends/tags: docs/product.md §2 lists it among the hidden children of /friends (issue 15).
            paths.extend(["/friends", "/friends/tags", "/wallet", "/wallet/top-up", "/messages", "/demands-and-offers", "/history"]);
        }
        UserType::Admin => {
            paths.extend(APP_PAGES);
            paths.extend(DEVICES);
            paths.extend(["/company", "/company/history", "/company/allocate"]);
        }
        UserType::Member => {} // the app and the three account paths only
    }
    if operator && user_type == UserType::User {
        paths.extend(OPERATOR);
    }
    paths
}

pub fn menu_for(user_type: UserType, operator: bool) -> Vec<MenuEntry> {
    let allowed = paths_for(user_type, operator);
    let entry = |i: &Item| MenuEntry {
        path: i.path.into(),
        name: i.name.into(),
        component: i.component.into(),
        meta: MenuMeta { icon: i.icon.into(), title: i.title.into(), is_link: false, is_hide: i.hidden },
        children: Vec::new(),
    };
    let mut tree: Vec<MenuEntry> = Vec::new();
    for i in ITEMS.iter().filter(|i| allowed.contains(&i.path)) {
        match i.parent {
            None => tree.push(entry(i)),
            Some(parent) => {
                if let Some(p) = tree.iter_mut().find(|e| e.path == parent) {
                    p.children.push(entry(i));
                }
            }
        }
    }
    tree
}
