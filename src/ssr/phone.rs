//! Which pages a phone is sent away from, and where to (docs/product.md §2 "Phone pages"). The rules
//! are written once, in ui/src/lib/phone-rules.json, which the UI's router reads too
//! (ui/src/lib/paths.ts): the server's redirect before the first paint and the client's on
//! navigation cannot drift apart.
//!   - `platforms`: a user agent containing one of these (lower case) is a phone's;
//!   - `exempt`: the pages a phone opens from a mail (docs/product.md §2, and the mailed password
//!     reset link of issue 17): a phone stays on them;
//!   - `twins`: the desktop pages with a phone page showing the same thing (issue 26), the
//!     console's among them (issue 41: sign-in, Z-APP, the wallet, the notifications).

use std::sync::LazyLock;

use serde::Deserialize;

#[derive(Deserialize)]
struct PhoneRules {
    platforms: Vec<String>,
    exempt: Vec<String>,
    twins: Vec<(String, String)>,
}

static RULES: LazyLock<PhoneRules> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../ui/src/lib/phone-rules.json")).expect("ui/src/lib/phone-rules.json: platforms, exempt, twins")
});

/// Whether a user agent is a phone's.
pub fn is_phone_agent(user_agent: &str) -> bool {
    let ua = user_agent.to_ascii_lowercase();
    RULES.platforms.iter().any(|p| ua.contains(p.as_str()))
}

/// Whether a phone may stay on `path` (a page it opens from a mail).
pub fn is_exempt(path: &str) -> bool {
    RULES.exempt.iter().any(|p| p == path)
}

/// The phone page showing what the desktop page `path` shows, if there is one.
pub fn twin(path: &str) -> Option<&'static str> {
    RULES.twins.iter().find(|(from, _)| from == path).map(|(_, to)| to.as_str())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_shared_rules_parse_and_say_what_docs_product_md_says() {
        assert!(super::is_phone_agent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"));
        assert!(super::is_phone_agent("Mozilla/5.0 (Linux; Android 14)"));
        assert!(!super::is_phone_agent("Mozilla/5.0 (Windows NT 10.0)"));
        assert!(super::is_exempt("/reset-password"));
        assert!(!super::is_exempt("/market"));
        assert_eq!(super::twin("/market/details"), Some("/m/market/details"));
        assert_eq!(super::twin("/wallet"), Some("/m/wallet"));
        assert_eq!(super::twin("/auth/signin"), Some("/m/auth/signin"));
        assert_eq!(super::twin("/devices"), None);
    }
}
