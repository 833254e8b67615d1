//! Reading DER (the X.509 certificate encoding) one element at a time: what the client's
//! certificate checks ([`crate::client::connect`]) and the simulator's client-certificate
//! authentication read certificates with. Definite lengths only, as DER requires.

/// One DER element: (tag, contents, rest). Definite lengths only, as DER requires.
pub fn next(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}
