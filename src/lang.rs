//! The interface language of a request: `zh` when `Accept-Language` contains "zh", otherwise
//! English (docs/api.md). Every localized text takes one.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub fn from_headers(headers: &HeaderMap) -> Lang {
        headers
            .get(header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .map(Lang::from_accept_language)
            .unwrap_or(Lang::En)
    }
    pub fn from_accept_language(value: &str) -> Lang {
        // "zh" in any case (no allocation: every request asks).
        if value.as_bytes().windows(2).any(|w| w.eq_ignore_ascii_case(b"zh")) { Lang::Zh } else { Lang::En }
    }
    pub fn parse(value: &str) -> Option<Lang> {
        match value {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Lang {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Lang::from_headers(&parts.headers))
    }
}


/// A short text in both languages (a status label, an action's verb).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Words {
    pub en: &'static str,
    pub zh: &'static str,
}

impl Words {
    pub const fn new(en: &'static str, zh: &'static str) -> Words {
        Words { en, zh }
    }
    pub fn get(self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.en,
            Lang::Zh => self.zh,
        }
    }
}
