//! Text built by concatenation instead of `format!`, for the protocol crate and the browser SDK
//! alike: without a `format!` left on a client's path the formatting engine (its `write`, padding,
//! number formatting) leaves the SDK's wasm, 2.0 KB gzip measured, and no message there needs more
//! than strings and whole numbers.

use alloc::string::String;

/// The pieces, joined.
pub fn concat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
}

/// `n` in decimal.
pub fn uint(n: u64) -> String {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits[i..].iter().map(|&d| char::from(d)).collect()
}

/// `n` in decimal, `-` before a negative one.
pub fn int(n: i64) -> String {
    let digits = uint(n.unsigned_abs());
    if n < 0 {
        concat(&["-", &digits])
    } else {
        digits
    }
}

#[cfg(test)]
mod tests {
    use super::{concat, int, uint};

    #[test]
    fn whole_numbers_read_as_display_writes_them() {
        for n in [0, 7, 10, 99, 100, 1006, 12_345, u64::MAX] {
            assert_eq!(uint(n), std::format!("{n}"));
        }
        for n in [0, -1, 7, -10, i64::MIN, i64::MAX] {
            assert_eq!(int(n), std::format!("{n}"));
        }
        assert_eq!(concat(&["a", "", "bc"]), "abc");
    }
}
