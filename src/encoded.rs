//! Bodies sent many times (a rendered page from the render cache, a market answer): compressed
//! once per encoding, the first time a client asks for it, then shared by every response. The
//! compression middleware would otherwise compress the same 56 KB page again for every browser
//! request (browsers always send `Accept-Encoding`); it leaves a response that already names its
//! `Content-Encoding` alone.

use std::io::Write;
use std::sync::OnceLock;

use axum::http::{HeaderMap, HeaderValue, Response, header};
use bytes::Bytes;

/// Bodies smaller than this are sent as they are (compression would gain nothing worth its cost).
const MIN_COMPRESSED_BYTES: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Identity,
    Gzip,
    Br,
}

/// The encoding to send for a request's `Accept-Encoding` (RFC 9110 §12.5.3): the acceptable one
/// (q > 0) with the highest q among br and gzip, br on a tie; `*` stands for those not named;
/// identity when neither is acceptable.
pub fn negotiate(headers: &HeaderMap) -> Coding {
    let (mut br, mut gzip, mut any): (Option<f32>, Option<f32>, Option<f32>) = (None, None, None);
    for value in headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()) {
        for item in value.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = parts
                .filter_map(|p| {
                    let (k, v) = p.split_once('=')?;
                    k.trim().eq_ignore_ascii_case("q").then(|| v.trim().parse::<f32>().ok()).flatten()
                })
                .next_back()
                .unwrap_or(1.0);
            match name.as_str() {
                "br" => br = Some(q),
                "gzip" | "x-gzip" => gzip = Some(q),
                "*" => any = Some(q),
                _ => {}
            }
        }
    }
    let (br, gzip) = (br.or(any).unwrap_or(0.0), gzip.or(any).unwrap_or(0.0));
    if br > 0.0 && br >= gzip {
        Coding::Br
    } else if gzip > 0.0 {
        Coding::Gzip
    } else {
        Coding::Identity
    }
}

/// A body with its compressed forms, each made when first asked for.
#[derive(Debug, Default)]
pub struct Encoded {
    raw: Bytes,
    gzip: OnceLock<Option<Bytes>>,
    br: OnceLock<Option<Bytes>>,
}

impl Encoded {
    pub fn new(raw: impl Into<Bytes>) -> Self {
        Encoded { raw: raw.into(), gzip: OnceLock::new(), br: OnceLock::new() }
    }

    pub fn raw(&self) -> &Bytes {
        &self.raw
    }

    /// The body in `coding` (None when that form would not be smaller, or the body is tiny).
    fn form(&self, coding: Coding) -> Option<Bytes> {
        if self.raw.len() < MIN_COMPRESSED_BYTES {
            return None;
        }
        let cell = match coding {
            Coding::Identity => return None,
            Coding::Gzip => &self.gzip,
            Coding::Br => &self.br,
        };
        cell.get_or_init(|| compress(&self.raw, coding).filter(|c| c.len() < self.raw.len())).clone()
    }

    /// A response carrying this body in the best form the request accepts, with
    /// `Content-Encoding` when compressed and `vary` (every request header the answer depends
    /// on, which must name `Accept-Encoding`).
    pub fn response(&self, request: &HeaderMap, vary: &'static str) -> Response<axum::body::Body> {
        debug_assert!(vary.to_ascii_lowercase().contains("accept-encoding"));
        let coding = negotiate(request);
        let (body, named) = match self.form(coding) {
            Some(b) => (b, Some(coding)),
            None => (self.raw.clone(), None),
        };
        let mut res = answer(body);
        let h = res.headers_mut();
        match named {
            Some(Coding::Br) => h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("br")),
            Some(Coding::Gzip) => h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip")),
            _ => None,
        };
        h.insert(header::VARY, HeaderValue::from_static(vary));
        res
    }
}

/// A 200 answer carrying `body`, its header map made with room for every header the stack adds
/// (security headers, request id, `Vary`, `Content-Length`: twelve on a page), so none of those
/// inserts rehashes the map: from empty, it grows twice on the way (6 → 12 → 24 entries), and
/// those two rehashes cost about 1,300 instructions a request.
pub fn answer(body: impl Into<axum::body::Body>) -> Response<axum::body::Body> {
    let mut res = Response::new(body.into());
    *res.headers_mut() = HeaderMap::with_capacity(16);
    res
}

fn compress(raw: &[u8], coding: Coding) -> Option<Bytes> {
    match coding {
        Coding::Identity => None,
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::with_capacity(raw.len() / 4), flate2::Compression::best());
            e.write_all(raw).ok()?;
            e.finish().ok().map(Bytes::from)
        }
        Coding::Br => {
            let mut out = Vec::with_capacity(raw.len() / 4);
            // Quality 9 of 11: within a few percent of the smallest, ~20 times faster than 11.
            let params = brotli::enc::BrotliEncoderParams { quality: 9, lgwin: 22, ..Default::default() };
            brotli::BrotliCompress(&mut &raw[..], &mut out, &params).ok()?;
            Some(Bytes::from(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VARY: &str = "Accept-Language, Accept-Encoding";

    fn accept(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn negotiation_follows_the_q_values() {
        assert_eq!(negotiate(&accept(&[])), Coding::Identity);
        assert_eq!(negotiate(&accept(&["gzip, deflate, br, zstd"])), Coding::Br);
        assert_eq!(negotiate(&accept(&["gzip"])), Coding::Gzip);
        assert_eq!(negotiate(&accept(&["GZIP;Q=0.5, br;q=0.4"])), Coding::Gzip);
        assert_eq!(negotiate(&accept(&["br;q=0", "gzip;q=0.1"])), Coding::Gzip);
        assert_eq!(negotiate(&accept(&["br;q=0, gzip;q=0"])), Coding::Identity);
        assert_eq!(negotiate(&accept(&["*"])), Coding::Br);
        assert_eq!(negotiate(&accept(&["*;q=0.5, br;q=0"])), Coding::Gzip);
        assert_eq!(negotiate(&accept(&["identity"])), Coding::Identity);
        assert_eq!(negotiate(&accept(&["deflate"])), Coding::Identity);
    }

    #[test]
    fn a_body_is_compressed_once_per_encoding_and_decodes_to_itself() {
        use std::io::Read;
        let page: String = (0..400).map(|i| format!("<li class=\"card\">app {i}</li>")).collect();
        let e = Encoded::new(page.clone());
        let gz = e.response(&accept(&["gzip"]), VARY);
        assert_eq!(gz.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(gz.headers()[header::VARY], VARY);
        let first = e.form(Coding::Gzip).unwrap();
        assert!(first.len() < page.len() / 5, "{}", first.len());
        assert_eq!(first.as_ptr(), e.form(Coding::Gzip).unwrap().as_ptr(), "made once, then shared");
        let mut out = String::new();
        flate2::read::GzDecoder::new(&first[..]).read_to_string(&mut out).unwrap();
        assert_eq!(out, page);
        let br = e.form(Coding::Br).unwrap();
        let mut out = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut out).unwrap();
        assert_eq!(out, page.as_bytes());
        assert_eq!(e.response(&accept(&["br"]), VARY).headers()[header::CONTENT_ENCODING], "br");
        // Identity asked, or a tiny body: as it is.
        assert!(e.response(&accept(&[]), VARY).headers().get(header::CONTENT_ENCODING).is_none());
        let tiny = Encoded::new("ok");
        assert!(tiny.response(&accept(&["br"]), VARY).headers().get(header::CONTENT_ENCODING).is_none());
    }
}
