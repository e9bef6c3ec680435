//! Percent-encoding of text put into a URL or a request path: which bytes each place
//! escapes, in one place (the encoding itself is `percent-encoding`'s).

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// Every byte but RFC 3986's unreserved characters (letters, digits, `-._~`).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// What a fragment may not hold (RFC 3986: a fragment is pchars, `/` and `?`).
const FRAGMENT: &AsciiSet = &COMPONENT
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@')
    .remove(b'/')
    .remove(b'?');

/// A query parameter's value or one path segment: everything but the unreserved
/// characters escaped (UTF-8 bytes), as a URL query and AWS's SigV4 path labels want.
pub fn component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// A URL fragment (a heading's id): a space, a quote, `#` or `%` escaped so it neither
/// ends the link nor reads as an escape; what a fragment may hold is kept as written.
pub fn fragment(id: &str) -> String {
    utf8_percent_encode(id, FRAGMENT).to_string()
}

/// A request path: each segment as [`component`] encodes it, the `/` between them kept.
pub fn path(path: &str) -> String {
    path.split('/').map(component).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_place_escapes_what_it_may_not_hold() {
        assert_eq!(component("a b/c?d=é~-._"), "a%20b%2Fc%3Fd%3D%C3%A9~-._");
        assert_eq!(
            fragment("(part._eq~3f) 100%#x\"<"),
            "(part._eq~3f)%20100%25%23x%22%3C"
        );
        assert_eq!(fragment("a:b/c?d@e!$&'*+,;="), "a:b/c?d@e!$&'*+,;=");
        assert_eq!(path("/model/a.b-v1%3A0/x y"), "/model/a.b-v1%253A0/x%20y");
    }
}
