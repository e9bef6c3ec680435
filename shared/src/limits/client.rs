//! Who a client is, for rate limits and the audit: its source address, widened to the
//! network one party controls.
//!
//! An IPv4 address is usually all a visitor has (behind NAT, many visitors share one). An
//! IPv6 visitor is normally handed a whole /64 (RFC 6177 even suggests /56 or /48 for
//! sites), so keying on the full address would give a scripted client 2^64 fresh buckets.
//! IPv6 clients are therefore keyed by their prefix (default /64, set with
//! `CLIENT_IPV6_PREFIX`), IPv4 clients (and IPv4 carried in IPv6, `::ffff:a.b.c.d`) by the
//! address.

use crate::secret::Secret;
use sha2::{Digest, Sha256};
use std::net::{IpAddr, Ipv6Addr};

/// The default IPv6 prefix length a client is keyed by.
pub(crate) const DEFAULT_IPV6_PREFIX: u8 = 64;

/// The network `ip` belongs to as a limits key: the IPv4 address itself, or the IPv6
/// address masked to `v6_prefix` bits written as `net/len`. Text that is no address (it
/// comes from the runtime, not the visitor, so only a misconfigured proxy would send one)
/// is kept as it is: it still names one client.
pub fn client_network(ip: &str, v6_prefix: u8) -> String {
    match ip.trim().parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let len = v6_prefix.min(128);
                let mask = u128::MAX.checked_shl(u32::from(128 - len)).unwrap_or(0);
                let net = Ipv6Addr::from(u128::from(v6) & mask);
                format!("{net}/{len}")
            }
        },
        Err(_) => ip.to_owned(),
    }
}

/// The audit form of a client address: the first 16 hex digits of SHA-256(salt, 0, ip).
/// Enough to tell clients apart in an audit, useless for recovering the address without
/// the salt.
pub fn client_hash(salt: &Secret, ip: &str) -> String {
    short_digest(&[salt.expose().as_bytes(), ip.as_bytes()])
}

/// 16 hex digits of the SHA-256 of `parts` joined by NUL, so that no two lists of parts
/// (without NULs) hash alike (`"ab", "c"` vs `"a", "bc"`).
pub(crate) fn short_digest(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            h.update([0u8]);
        }
        h.update(part);
    }
    hex::encode(&h.finalize()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_clients_are_keyed_by_address() {
        assert_eq!(client_network("203.0.113.9", 64), "203.0.113.9");
        assert_ne!(
            client_network("203.0.113.9", 64),
            client_network("203.0.113.10", 64)
        );
        assert_eq!(client_network("::ffff:203.0.113.9", 64), "203.0.113.9");
    }

    #[test]
    fn ipv6_clients_are_keyed_by_their_prefix() {
        let a = client_network("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 64);
        assert_eq!(a, "2001:db8:1:2::/64");
        assert_eq!(a, client_network("2001:db8:1:2::1", 64));
        assert_ne!(a, client_network("2001:db8:1:3::1", 64));
        assert_eq!(
            client_network("2001:db8:1:2ff::1", 56),
            client_network("2001:db8:1:200::9", 56)
        );
        assert_eq!(client_network("2001:db8::1", 128), "2001:db8::1/128");
        assert_eq!(client_network("2001:db8::1", 0), "::/0");
    }

    #[test]
    fn text_that_is_no_address_keeps_its_own_key() {
        assert_eq!(client_network("unknown", 64), "unknown");
    }
}
