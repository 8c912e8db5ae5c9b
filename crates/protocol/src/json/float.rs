//! Decimal text to the nearest `f64`, without core's `<f64 as FromStr>`.
//!
//! core's parser is fast on every input because it carries Eisel–Lemire tables of powers of
//! five, about 14.5 KB gzip of the browser SDK's wasm. JSON numbers are nearly all short, so
//! this one is fast only where that is cheap, and exact everywhere because every path ends in
//! an integer quotient of at least 54 bits plus whether a remainder was left, which is all that
//! rounding to nearest, ties to even, needs:
//! - Clinger's fast path: a mantissa of at most 53 bits and a power of ten an `f64` holds
//!   exactly, so one IEEE multiply or divide rounds correctly by itself;
//! - up to 19 digits and a power of ten within 10^±27: the value is `digits × 5^k × 2^k` and
//!   the product or quotient by 5^k fits a `u128`;
//! - anything else: the same quotient from big integers (digits past `MAX_DIGITS` folded into
//!   one), estimated from the leading limbs and corrected against the exact remainder.

use alloc::vec::Vec;

/// Significant digits the slow path reads. A halfway point between two adjacent `f64`s (or
/// between the largest and 2^1024, or 0 and the smallest subnormal) has at most 768 significant
/// digits, so it falls on this grid of digits; a number with more digits is strictly between two
/// grid points and hence on the same side of every halfway point as the grid point below it
/// followed by a `1`.
const MAX_DIGITS: usize = 800;

/// The powers of ten an `f64` holds exactly: a product or quotient with one of these is the
/// correctly rounded result when the other operand is exact too.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Integers up to this convert to `f64` exactly.
const EXACT_INT: u64 = 1 << 53;

/// What `text.parse::<f64>()` gives, `None` where that is an error, without linking core's
/// parser: the Worker reaches core's only through a few fields it reads from settings, model
/// replies and tool calls, and its tables are several KB of the upload beside this parser,
/// which the Worker links for JSON anyway.
///
/// The grammar is core's (`<f64 as FromStr>`), not JSON's: an optional `+` or `-`, then either
/// decimal digits with at most one `.` and at least one digit (`5`, `5.`, `.5`, `007`), followed
/// by an optional exponent (`e` or `E`, an optional sign, at least one digit), or one of `inf`,
/// `infinity` and `nan` in any case. Nothing else, whitespace included, is accepted. A number
/// too large gives an infinity and one too small a zero, both with its sign, as core does.
pub fn parse_f64(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let (negative, body) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    };
    let magnitude = if is_decimal(body) {
        parse_magnitude(body)
    } else if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        f64::INFINITY
    } else if body.eq_ignore_ascii_case(b"nan") {
        f64::NAN
    } else {
        return None;
    };
    // Negating flips the sign bit of a NaN too, as core does for `-nan`.
    Some(if negative { -magnitude } else { magnitude })
}

/// Digits with at most one `.` and at least one digit, then an optional exponent with at least
/// one digit: the shapes `parse_magnitude` reads.
fn is_decimal(body: &[u8]) -> bool {
    let digits = |from: usize| {
        body.get(from..).map_or(0, |rest| {
            rest.iter().take_while(|b| b.is_ascii_digit()).count()
        })
    };
    let whole = digits(0);
    let mut at = whole;
    let mut fraction = 0;
    if body.get(at) == Some(&b'.') {
        fraction = digits(at + 1);
        at += 1 + fraction;
    }
    if whole + fraction == 0 {
        return false;
    }
    if matches!(body.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(body.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exponent = digits(at);
        if exponent == 0 {
            return false;
        }
        at += exponent;
    }
    at == body.len()
}

/// The f64 nearest to the JSON number `text` (grammar already checked by the caller:
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`), ties to even, exactly as `text.parse::<f64>()`
/// gives; infinite when it overflows (the caller turns that into an error).
pub(crate) fn parse(text: &str) -> f64 {
    let bytes = text.as_bytes();
    let (negative, body) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let magnitude = parse_magnitude(body);
    // Negating keeps the sign on zero, which `-0` must give.
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

fn parse_magnitude(body: &[u8]) -> f64 {
    let (mantissa, exponent) = match body.iter().position(|&b| b | 0x20 == b'e') {
        Some(at) => {
            let (mantissa, rest) = body.split_at(at);
            (mantissa, rest.get(1..).unwrap_or_default())
        }
        None => (body, &[][..]),
    };

    // The number is `digits × 10^exp10` where `digits` is the `count` significant digits (from
    // the first nonzero one to the last nonzero one); `leading` holds them while they fit.
    let mut leading: u64 = 0;
    let mut count: usize = 0;
    let mut zeros: usize = 0;
    let mut fraction_len: usize = 0;
    let mut in_fraction = false;
    for &b in mantissa {
        match b {
            b'.' => in_fraction = true,
            b'0'..=b'9' => {
                fraction_len += usize::from(in_fraction);
                if b == b'0' {
                    // Zeros only count once a nonzero digit follows them.
                    zeros += usize::from(count > 0);
                } else {
                    count += zeros + 1;
                    if count <= 19 {
                        for _ in 0..zeros {
                            leading *= 10;
                        }
                        leading = leading * 10 + u64::from(b - b'0');
                    }
                    zeros = 0;
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        return 0.0;
    }
    let exp10 = parse_exponent(exponent)
        .saturating_sub(to_i64(fraction_len))
        .saturating_add(to_i64(zeros));

    // digits × 10^exp10 lies in [10^(count-1+exp10), 10^(count+exp10)): beyond these bounds
    // it is past the overflow threshold (about 1.8e308) or below half the smallest subnormal
    // (about 2.5e-324), which also bounds the sizes of the big integers below.
    let magnitude10 = exp10.saturating_add(to_i64(count));
    if magnitude10 > 310 {
        return f64::INFINITY;
    }
    if magnitude10 < -325 {
        return 0.0;
    }

    if count <= 19 {
        if let Some(value) = fast_path(leading, exp10).or_else(|| mid_path(leading, exp10)) {
            return value;
        }
    }
    slow_path(mantissa, count, exp10)
}

/// The exponent after `e`. It saturates at 2^40: past ±(310 + 325), only a mantissa of as
/// many digits could bring the number back into range.
fn parse_exponent(text: &[u8]) -> i64 {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    let mut value: i64 = 0;
    for &b in digits {
        value = (value * 10 + i64::from(b.wrapping_sub(b'0') % 10)).min(1 << 40);
    }
    if negative {
        -value
    } else {
        value
    }
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Clinger's fast path: exact when both operands are exact `f64`s, including exponents a little
/// past 22 whose excess power of ten the mantissa absorbs without passing 2^53.
fn fast_path(mut mantissa: u64, exp10: i64) -> Option<f64> {
    if mantissa > EXACT_INT {
        return None;
    }
    if exp10 < 0 {
        let divisor = POW10.get(usize::try_from(-exp10).ok()?)?;
        return Some(mantissa as f64 / divisor);
    }
    let mut exp10 = usize::try_from(exp10).ok()?;
    while exp10 > 22 {
        mantissa = mantissa.checked_mul(10).filter(|&m| m <= EXACT_INT)?;
        exp10 -= 1;
    }
    Some(mantissa as f64 * POW10.get(exp10)?)
}

/// Exact in `u128` when the power of five fits a `u64`, which covers the 17-digit numbers
/// shortest-round-trip printers write for most floats, without allocating.
fn mid_path(mantissa: u64, exp10: i64) -> Option<f64> {
    let mut k = u32::try_from(exp10.unsigned_abs())
        .ok()
        .filter(|&k| k <= 27)?;
    let mantissa = u128::from(mantissa);
    if exp10 >= 0 {
        return Some(round(mantissa * u128::from(5u64.pow(k)), false, exp10));
    }
    // Divided by 5^27 at most, the quotient keeps at least 64 bits.
    let lz = mantissa.leading_zeros();
    let mut quotient = mantissa << lz;
    let mut sticky = false;
    while k > 0 {
        // ⌊⌊n / a⌋ / b⌋ = ⌊n / ab⌋, with a remainder left exactly when either step leaves one.
        let step = k.min(13);
        let remainder;
        (quotient, remainder) = div_small(quotient, 5u32.pow(step));
        sticky |= remainder;
        k -= step;
    }
    Some(round(quotient, sticky, exp10 - i64::from(lz)))
}

/// `n / d`, and whether a remainder is left, a 32-bit digit at a time in `u64` arithmetic,
/// which wasm has natively (`u128` division would link compiler-builtins' general routine).
fn div_small(n: u128, d: u32) -> (u128, bool) {
    let d = u64::from(d);
    let mut quotient = 0;
    let mut remainder = 0;
    for digit in (0..4).rev() {
        let current = remainder << 32 | (n >> (32 * digit)) as u64 & 0xffff_ffff;
        quotient = quotient << 32 | u128::from(current / d);
        remainder = current % d;
    }
    (quotient, remainder != 0)
}

/// `n / d` for a quotient below 2^64, by shift and subtract, for the reason `div_small` gives;
/// the slow path's big-integer arithmetic dwarfs its 64 steps.
fn div(mut n: u128, d: u128) -> u128 {
    let mut quotient = 0;
    for bit in (0..64).rev() {
        if n >> bit >= d {
            n -= d << bit;
            quotient |= 1 << bit;
        }
    }
    quotient
}

/// The exact route: `digits × 5^exp × 2^exp` as the quotient of two big integers.
fn slow_path(mantissa: &[u8], count: usize, mut exp10: i64) -> f64 {
    let kept = count.min(MAX_DIGITS);
    let mut num = Big::default();
    let mut chunk: u32 = 0;
    let mut chunk_len: u32 = 0;
    let mut seen = 0;
    for &b in mantissa {
        if !b.is_ascii_digit() || (seen == 0 && b == b'0') {
            continue;
        }
        if seen == kept {
            break;
        }
        seen += 1;
        chunk = chunk * 10 + u32::from(b - b'0');
        chunk_len += 1;
        if chunk_len == 9 {
            num.mul_add(1_000_000_000, chunk);
            (chunk, chunk_len) = (0, 0);
        }
    }
    num.mul_add(10u64.pow(chunk_len), chunk);
    if count > kept {
        // The dropped digits end in a nonzero one (`count` stops at the last nonzero digit).
        num.mul_add(10, 1);
        exp10 = exp10.saturating_add(to_i64(count - kept) - 1);
    }

    // The range checks in `parse_magnitude` keep `exp10` within about ±1200 here.
    let exp10 = i32::try_from(exp10.clamp(-2000, 2000)).unwrap_or_default();
    let mut den = Big(alloc::vec![1]);
    if exp10 >= 0 {
        num.mul_pow5(exp10.unsigned_abs());
    } else {
        den.mul_pow5(exp10.unsigned_abs());
    }

    // Scale so the quotient has 62 or 63 bits: num/den is in (2^(n-d-1), 2^(n-d+1)).
    let shift = 62 - (num.bits() - den.bits());
    if shift >= 0 {
        num.shl(shift.unsigned_abs());
    } else {
        den.shl(shift.unsigned_abs());
    }
    // Cut to windows that keep the divisor's leading 64 bits, the quotient is at most a few
    // units too big and never too small (q × ⌊den/2^low⌋ ≤ ⌊num/2^low⌋ for the true q), so
    // the exact product steps it down.
    let low = (den.bits() - 64).max(0).unsigned_abs();
    let divisor = den.shr_u128(low).max(1);
    let mut quotient = u64::try_from(div(num.shr_u128(low), divisor)).unwrap_or(u64::MAX);
    let mut product = Big(den.0.clone());
    product.mul_add(quotient, 0);
    while !num.at_least(&product) {
        product.sub(&den);
        quotient = quotient.saturating_sub(1);
    }
    let sticky = !product.at_least(&num);
    round(
        u128::from(quotient),
        sticky,
        i64::from(exp10) - i64::from(shift),
    )
}

/// The `f64` nearest to `(quotient + f) × 2^exp2`, where `0 <= f < 1` and `sticky` says
/// `f > 0`. With `sticky`, `quotient` is at least 2^54, so the bits dropped include the
/// half-unit bit and `f` only breaks ties.
fn round(quotient: u128, sticky: bool, exp2: i64) -> f64 {
    let lz = quotient.leading_zeros();
    let q = quotient << lz;
    let exp2 = exp2 - i64::from(lz);
    // q's top bit is worth 2^(127+exp2); a normal f64 keeps 53 bits, a subnormal fewer.
    let mut unit = (exp2 + 75).max(-1074);
    let drop = unit - exp2;
    if drop > 128 {
        // Below half the smallest subnormal.
        return 0.0;
    }
    let drop = u32::try_from(drop).unwrap_or(128);
    let (mut m, rest) = if drop == 128 {
        (0, q)
    } else {
        (q >> drop, q & ((1 << drop) - 1))
    };
    let half = 1u128 << (drop - 1);
    if rest > half || (rest == half && (sticky || m & 1 == 1)) {
        m += 1;
    }
    if m == 1 << 53 {
        m >>= 1;
        unit += 1;
    }
    let m = u64::try_from(m).unwrap_or_default();
    if m < 1 << 52 {
        // Subnormal (unit is -1074), or rounded up into the smallest normal.
        return f64::from_bits(m);
    }
    let biased = unit + 1075;
    if biased >= 2047 {
        return f64::INFINITY;
    }
    let biased = u64::try_from(biased).unwrap_or_default();
    f64::from_bits(biased << 52 | (m & ((1 << 52) - 1)))
}

/// A natural number in base 2^32, least significant limb first, without zero limbs on top
/// (so the limb count orders values of different lengths).
#[derive(Default)]
struct Big(Vec<u32>);

impl Big {
    fn mul_add(&mut self, factor: u64, addend: u32) {
        let mut carry = u128::from(addend);
        for limb in &mut self.0 {
            let wide = u128::from(*limb) * u128::from(factor) + carry;
            *limb = wide as u32;
            carry = wide >> 32;
        }
        while carry != 0 {
            self.0.push(carry as u32);
            carry >>= 32;
        }
        self.trim();
    }

    fn mul_pow5(&mut self, mut n: u32) {
        // 5^27 is the largest power of five in a u64.
        while n >= 27 {
            self.mul_add(7_450_580_596_923_828_125, 0);
            n -= 27;
        }
        self.mul_add(5u64.pow(n), 0);
    }

    fn shl(&mut self, bits: u32) {
        let limbs = (bits / 32) as usize;
        let bits = bits % 32;
        if bits > 0 {
            let mut carry = 0;
            for limb in &mut self.0 {
                let next = *limb >> (32 - bits);
                *limb = *limb << bits | carry;
                carry = next;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        if limbs > 0 && !self.0.is_empty() {
            let mut shifted = Vec::with_capacity(limbs + self.0.len());
            shifted.resize(limbs, 0);
            shifted.extend_from_slice(&self.0);
            self.0 = shifted;
        }
    }

    /// self >> low, truncated to 128 bits: a window for estimating a quotient.
    fn shr_u128(&self, low: u32) -> u128 {
        let mut out = 0;
        let skip = (low / 32) as usize;
        for (i, &limb) in self.0.iter().skip(skip).take(5).enumerate() {
            // Where this limb's lowest bit lands in the result.
            let at = 32 * i as i32 - (low % 32) as i32;
            let limb = u128::from(limb);
            out |= match at {
                ..0 => limb >> -at,
                0..128 => limb << at,
                _ => 0,
            };
        }
        out
    }

    fn bits(&self) -> i32 {
        let top = self.0.last().map_or(0, |&top| 32 - top.leading_zeros());
        let len = i32::try_from(self.0.len()).unwrap_or(i32::MAX / 64);
        (len - 1) * 32 + top as i32
    }

    fn at_least(&self, other: &Big) -> bool {
        if self.0.len() != other.0.len() {
            return self.0.len() > other.0.len();
        }
        for (a, b) in self.0.iter().rev().zip(other.0.iter().rev()) {
            if a != b {
                return a > b;
            }
        }
        true
    }

    /// self − other, for `other <= self`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = false;
        let mut rhs = other.0.iter();
        for limb in &mut self.0 {
            let b = rhs.next().copied().unwrap_or(0);
            let (d, o1) = limb.overflowing_sub(b);
            let (d, o2) = d.overflowing_sub(u32::from(borrow));
            *limb = d;
            borrow = o1 || o2;
        }
        self.trim();
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    #[track_caller]
    fn check(text: &str) {
        let want = text.parse::<f64>().unwrap();
        let got = parse(text);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{text}: got {got:e}, want {want:e}"
        );
    }

    /// xorshift64*: deterministic, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Decimal digits of a natural number kept in base 10^9, least significant limb first.
    fn decimal(limbs: &[u32]) -> String {
        let mut out = String::new();
        for (i, limb) in limbs.iter().rev().enumerate() {
            if i == 0 {
                out += &limb.to_string();
            } else {
                out += &format!("{limb:09}");
            }
        }
        out
    }

    fn mul_small(limbs: &mut Vec<u32>, factor: u32) {
        let mut carry = 0u64;
        for limb in limbs.iter_mut() {
            let wide = u64::from(*limb) * u64::from(factor) + carry;
            *limb = (wide % 1_000_000_000) as u32;
            carry = wide / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push((carry % 1_000_000_000) as u32);
            carry /= 1_000_000_000;
        }
    }

    /// The exact midpoint between `x` (positive, finite) and the next float up, as decimal
    /// digits and a power of ten.
    fn midpoint(x: f64) -> (Vec<u32>, i64) {
        let bits = x.to_bits();
        let biased = (bits >> 52) as i64;
        let frac = bits & ((1 << 52) - 1);
        let (m, e) = if biased == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, biased - 1075)
        };
        // (2m + 1) × 2^(e-1)
        let odd = 2 * m + 1;
        let mut limbs = std::vec![
            (odd % 1_000_000_000) as u32,
            (odd / 1_000_000_000 % 1_000_000_000) as u32,
            (odd / 1_000_000_000_000_000_000) as u32
        ];
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
        let (factor, mut n, exp10) = if e > 0 {
            (2u32, e - 1, 0)
        } else {
            (5, 1 - e, e - 1)
        };
        while n > 0 {
            let step = n.min(if factor == 2 { 29 } else { 12 });
            mul_small(&mut limbs, factor.pow(step as u32));
            n -= step;
        }
        (limbs, exp10)
    }

    fn add_signed(limbs: &mut Vec<u32>, delta: i32) {
        let mut i = 0;
        if delta > 0 {
            loop {
                if i == limbs.len() {
                    limbs.push(0);
                }
                limbs[i] += 1;
                if limbs[i] < 1_000_000_000 {
                    break;
                }
                limbs[i] = 0;
                i += 1;
            }
        } else if delta < 0 {
            while limbs[i] == 0 {
                limbs[i] = 999_999_999;
                i += 1;
            }
            limbs[i] -= 1;
            while limbs.last() == Some(&0) {
                limbs.pop();
            }
        }
    }

    /// The decimal digits of one more than `digits`.
    fn increment(digits: &str) -> String {
        let mut bytes = digits.as_bytes().to_vec();
        for b in bytes.iter_mut().rev() {
            if *b == b'9' {
                *b = b'0';
            } else {
                *b += 1;
                return String::from_utf8(bytes).unwrap();
            }
        }
        format!("1{}", String::from_utf8(bytes).unwrap())
    }

    /// `digits × 10^exp10` in a random one of the grammar's shapes.
    fn shape(rng: &mut Rng, digits: &str, exp10: i64) -> String {
        let point = rng.below(digits.len() as u64 + 1) as usize;
        match rng.below(4) {
            0 => format!("{digits}e{exp10}"),
            1 if point > 0 && point < digits.len() => {
                let (int, frac) = digits.split_at(point);
                let exp = exp10 + frac.len() as i64;
                format!("{int}.{frac}E{}{exp}", if exp >= 0 { "+" } else { "" })
            }
            2 => {
                let zeros = "0".repeat(rng.below(5) as usize);
                format!(
                    "0.{zeros}{digits}e{}",
                    exp10 + (digits.len() + zeros.len()) as i64
                )
            }
            _ if (0..400).contains(&exp10) => format!("{digits}{}", "0".repeat(exp10 as usize)),
            _ => format!("{digits}e{exp10}"),
        }
    }

    #[test]
    fn hard_cases() {
        for text in [
            "0",
            "-0",
            "-0.0",
            "0.000",
            "-0e-5",
            "0e99999999999999999999",
            "-0.0e-99999999999999999999",
            "1e-99999999999999999999",
            "-1e-99999999999999999999",
            "1e99999999999999999999",
            "-1e99999999999999999999",
            "1E+0010",
            "1e007",
            "0.1",
            "0.2",
            "0.3",
            "0.30000000000000004",
            "1e23",
            "1e22",
            "1e-22",
            "123e-22",
            "1e-23",
            "9007199254740993e-22",
            "4503599627370497.5",
            "4503599627370496.5",
            "123456789e15",
            "9007199254740992",
            "9007199254740993",
            "9007199254740994",
            "9007199254740995",
            "9007199254740993.0000000000000000000000000000001",
            "900719925474099300000000000000000000000000e-26",
            "8.98846567431158e307",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "-1.7976931348623159e308",
            "2.2250738585072011e-308",
            "2.2250738585072012e-308",
            "2.2250738585072014e-308",
            "2.225073858507201e-308",
            "4.9406564584124654e-324",
            "4.9e-324",
            "5e-324",
            "3e-324",
            "2e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "-2.4703282292062328e-324",
            "1e-324",
            "1e-325",
            "1e308",
            "1e309",
            "1e-400",
            "0.0000000000000000000000000000000000000000000000001e49",
            "100000000000000000000000000000000000000000000000000e-50",
            "3.141592653589793",
            "2.718281828459045",
            "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124",
            "1.00000000000000011102230246251565404236316680908203126",
            "7.2057594037927933e16",
            "1448997445238699",
            "18446744073709551615",
            "18446744073709551616e-19",
            "12345678901234567890123456789012345678901234567890",
        ] {
            check(text);
        }
        let max = "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
        check(max);
        check(&format!("{}1", &max[..max.len() - 1]));
        check(&format!("{}1.9999", &max[..max.len() - 1]));
        // Long mantissas: past MAX_DIGITS, at and around the halfway points at both ends.
        check(&format!("0.{}1", "0".repeat(1000)));
        check(&format!("1{}e-1000", "0".repeat(1000)));
        check(&format!("1.{}1", "0".repeat(2000)));
        check(&format!("{}e-1800", "9".repeat(2000)));
        for x in [
            f64::from_bits(0),
            f64::from_bits(1),
            f64::MIN_POSITIVE,
            1.0,
            f64::MAX,
        ] {
            let (mut limbs, exp10) = midpoint(x);
            for delta in [0, -1, 1, 1] {
                add_signed(&mut limbs, delta);
                let digits = decimal(&limbs);
                check(&format!("{digits}e{exp10}"));
                check(&format!("{digits}{}1e{}", "0".repeat(900), exp10 - 901));
                check(&format!("{digits}{}e{}", "0".repeat(900), exp10 - 900));
            }
        }
    }

    #[test]
    fn agrees_with_core() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let rounds = if cfg!(debug_assertions) {
            25_000
        } else {
            100_000
        };
        let mut compared = 0usize;
        let mut compare = |text: &str| {
            check(text);
            compared += 1;
        };
        for _ in 0..rounds {
            // A random float, printed both ways, then with a digit changed.
            let x = f64::from_bits(rng.next() & !(1 << 63));
            if x.is_finite() {
                for text in [
                    format!("{x}"),
                    format!("-{x}"),
                    format!("{x:e}"),
                    format!("-{x:e}"),
                ] {
                    compare(&text);
                    let mut bytes = text.into_bytes();
                    let digits: Vec<usize> = (1..bytes.len())
                        .filter(|&i| bytes[i].is_ascii_digit())
                        .collect();
                    let i = rng.below(digits.len() as u64 + 1) as usize;
                    // A digit right after `-` stays, so a leading `0` stays alone.
                    if let Some(&i) = digits.get(i).filter(|&&i| bytes[i - 1] != b'-') {
                        bytes[i] = b'0' + rng.below(10) as u8;
                        compare(core::str::from_utf8(&bytes).unwrap());
                    }
                }
            }

            // Random digits with a random exponent.
            let len = 1 + rng.below(40) as usize;
            let mut digits = String::new();
            for i in 0..len {
                let low = u64::from(i == 0);
                digits.push((b'0' + (low + rng.below(10 - low)) as u8) as char);
            }
            let exp10 = rng.below(701) as i64 - 350;
            compare(&shape(&mut rng, &digits, exp10));

            // The halfway point above a random float, or a neighbour in its last digit.
            let x = f64::from_bits(rng.below(0x7ff0_0000_0000_0000));
            let (mut limbs, exp10) = midpoint(x);
            add_signed(&mut limbs, rng.below(3) as i32 - 1);
            if !limbs.is_empty() {
                compare(&shape(&mut rng, &decimal(&limbs), exp10));
            }

            // That halfway point cut to at most 40 digits, rounded down or up: just below or
            // above it by less than a unit in the last digit (at 17 to 19 digits these take the
            // `u128` path, where only the remainder tells them from the halfway point).
            let (limbs, exp10) = midpoint(x);
            let digits = decimal(&limbs);
            let len = 1 + rng.below(digits.len().min(40) as u64) as usize;
            let exp10 = exp10 + (digits.len() - len) as i64;
            let (floor, cut) = digits.split_at(len);
            compare(&shape(&mut rng, floor, exp10));
            if cut.bytes().any(|b| b != b'0') {
                compare(&shape(&mut rng, &increment(floor), exp10));
            }
        }
        std::eprintln!("compared {compared} inputs with core");
    }
}
