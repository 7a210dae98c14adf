//! The client's address, as every per-IP limit counts it. The TCP peer, unless the peer is one of
//! `server.trusted_proxies`: then the nearest address in `X-Forwarded-For` that is not itself a
//! trusted proxy (read from the right, so a client cannot forge its way past the proxy, which
//! appends the address it saw).

use std::net::IpAddr;
use std::sync::Arc;

use axum::http::HeaderMap;

/// One trusted entry: an address or a CIDR block (`10.0.0.0/8`, `::1`, `fd00::/8`).
#[derive(Debug, Clone, Copy)]
pub struct Net {
    addr: IpAddr,
    prefix: u8,
}

impl Net {
    pub fn parse(s: &str) -> Option<Net> {
        let s = s.trim();
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a.parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max)?,
            None => max,
        };
        Some(Net { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(i)) => mask(u32::from(n) as u128, u32::from(i) as u128, self.prefix, 32),
            (IpAddr::V6(n), IpAddr::V6(i)) => mask(u128::from(n), u128::from(i), self.prefix, 128),
            _ => false,
        }
    }
}

fn mask(net: u128, ip: u128, prefix: u8, bits: u8) -> bool {
    if prefix == 0 {
        return true;
    }
    let shift = u32::from(bits - prefix);
    (net >> shift) == (ip >> shift)
}

/// An IPv4 address seen through an IPv6 socket (`::ffff:1.2.3.4`) counts as the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// `server.trusted_proxies`, parsed once.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<Vec<Net>>);

impl TrustedProxies {
    pub fn new(entries: &[String]) -> Result<Self, String> {
        entries
            .iter()
            .map(|e| Net::parse(e).ok_or_else(|| format!("`{e}` is not an address or CIDR block")))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| TrustedProxies(Arc::new(v)))
    }

    /// True when `ip` is one of the trusted proxies.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|n| n.contains(ip))
    }

    /// The client behind `peer`, given the request's `X-Forwarded-For` values.
    pub fn client(&self, peer: IpAddr, forwarded_for: &[&str]) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let hops: Vec<IpAddr> =
            forwarded_for.iter().flat_map(|v| v.split(',')).filter_map(|h| h.trim().parse::<IpAddr>().ok()).map(canonical).collect();
        hops.iter().rev().copied().find(|ip| !self.trusts(*ip)).or(hops.first().copied()).unwrap_or(peer)
    }

    /// The client of a request from `peer` (the TCP peer) with these headers: `X-Forwarded-For`
    /// is read only behind a trusted proxy.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        if !self.trusts(peer) {
            return canonical(peer);
        }
        let forwarded: Vec<&str> = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok()).collect();
        self.client(peer, &forwarded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forwarded_for_counts_only_behind_a_trusted_proxy() {
        let t = TrustedProxies::new(&["10.0.0.0/8".into(), "::1".into()]).unwrap();
        assert_eq!(t.client(ip("203.0.113.9"), &["1.2.3.4"]), ip("203.0.113.9"));
        assert_eq!(t.client(ip("10.1.2.3"), &["1.2.3.4"]), ip("1.2.3.4"));
        // A forged first hop is ignored: the nearest untrusted hop is the client.
        assert_eq!(t.client(ip("10.1.2.3"), &["6.6.6.6, 1.2.3.4"]), ip("1.2.3.4"));
        assert_eq!(t.client(ip("10.1.2.3"), &["6.6.6.6", "1.2.3.4, 10.9.9.9"]), ip("1.2.3.4"));
        assert_eq!(t.client(ip("10.1.2.3"), &[]), ip("10.1.2.3"));
        assert_eq!(t.client(ip("10.1.2.3"), &["garbage"]), ip("10.1.2.3"));
        assert_eq!(t.client(ip("::ffff:10.0.0.1"), &["1.2.3.4"]), ip("1.2.3.4"));
        assert_eq!(t.client(ip("::1"), &["2001:db8::1"]), ip("2001:db8::1"));
        assert!(TrustedProxies::new(&["10.0.0.0/33".into()]).is_err());
        assert!(TrustedProxies::new(&["nope".into()]).is_err());
        assert!(Net::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
    }
}
