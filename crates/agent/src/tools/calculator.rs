//! `calculator`: a recursive-descent evaluator for arithmetic, so the model gets exact answers
//! without anything resembling `eval`.
//!
//! Grammar, loosest binding first:
//!
//! ```text
//! expression := term (("+" | "-") term)*
//! term       := unary (("*" | "/" | "%") unary)*
//! unary      := ("-" | "+") unary | power
//! power      := primary ("^" unary)?            -- right-associative; -2^2 = -(2^2)
//! primary    := number | name | name "(" expression ("," expression)* ")" | "(" expression ")"
//! ```
//!
//! `**` is accepted as `^`. Numbers are `f64`; `%` is the remainder with the sign of the
//! dividend. Names and functions are case-insensitive.

use weft_protocol::json::parse_f64;

/// The longest expression accepted, in characters: generous for arithmetic, and a bound on the
/// work one call can cause.
pub const MAX_EXPRESSION_LEN: usize = 1000;

/// How deeply parentheses, function calls, unary signs and powers may nest, so a hostile
/// expression cannot exhaust the stack (each level costs a few frames).
pub const MAX_NESTING: usize = 64;

/// Evaluates `expression` and formats the result for the model: whole numbers without `.0`,
/// others rounded to 12 significant digits so float noise disappears (`0.1+0.2` → `0.3`),
/// very large or small magnitudes in exponent form (`1e21`, `1.5e-10`).
///
/// Errors say what and where, with 1-based character positions: `syntax error at position 4:
/// expected ')'`, `division by zero at position 3`, `unknown name 'x' at position 1`,
/// `sqrt(-1) is not a real number`.
pub fn evaluate(expression: &str) -> Result<String, String> {
    let length = expression.chars().count();
    if length > MAX_EXPRESSION_LEN {
        return Err(format!(
            "the expression is too long: {length} characters; the limit is \
             {MAX_EXPRESSION_LEN}"
        ));
    }
    let tokens = tokenize(expression)?;
    if tokens.is_empty() {
        return Err("the expression is empty".to_string());
    }
    let mut parser = Parser {
        tokens,
        next: 0,
        depth: 0,
        end: length + 1,
    };
    let value = parser.expression()?;
    if let Some(token) = parser.peek() {
        return Err(format!(
            "syntax error at position {}: unexpected {}",
            token.position,
            token.kind.describe()
        ));
    }
    Ok(format_number(value))
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Number(f64),
    Name(String),
    /// One of `+ - * / % ^ ( ) ,` (`**` arrives as `^`).
    Symbol(char),
}

impl Kind {
    fn describe(&self) -> String {
        match self {
            Kind::Number(n) => format!("number {}", format_number(*n)),
            Kind::Name(name) => format!("name '{name}'"),
            Kind::Symbol(c) => format!("'{c}'"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: Kind,
    /// 1-based character position of the token's first character.
    position: usize,
}

fn tokenize(input: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let position = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            if chars.get(i) == Some(&'.') {
                i += 1;
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
            }
            // An exponent only if digits follow, so `2e` stays "2 then the name e".
            if matches!(chars.get(i), Some('e' | 'E')) {
                let digits_at = if matches!(chars.get(i + 1), Some('+' | '-')) {
                    i + 2
                } else {
                    i + 1
                };
                if chars.get(digits_at).is_some_and(char::is_ascii_digit) {
                    i = digits_at;
                    while chars.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                }
            }
            // `1.2.3`, `1..2`: one bad number, not several good ones.
            if chars.get(i) == Some(&'.') {
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.')
                {
                    i += 1;
                }
            }
            let text: String = chars[start..i].iter().collect();
            // core's grammar, as `str::parse` read it (`5.`, `.5`, `007` too), without its tables.
            let value = parse_f64(&text).ok_or_else(|| {
                format!("syntax error at position {position}: invalid number '{text}'")
            })?;
            if !value.is_finite() {
                return Err(format!("the number at position {position} is too large"));
            }
            tokens.push(Token {
                kind: Kind::Number(value),
                position,
            });
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            tokens.push(Token {
                kind: Kind::Name(
                    chars[start..i]
                        .iter()
                        .collect::<String>()
                        .to_ascii_lowercase(),
                ),
                position,
            });
        } else if c == '*' && chars.get(i + 1) == Some(&'*') {
            tokens.push(Token {
                kind: Kind::Symbol('^'),
                position,
            });
            i += 2;
        } else if "+-*/%^(),".contains(c) {
            tokens.push(Token {
                kind: Kind::Symbol(c),
                position,
            });
            i += 1;
        } else {
            let shown = if c.is_control() {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            };
            return Err(format!(
                "syntax error at position {position}: unexpected character '{shown}'"
            ));
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    next: usize,
    depth: usize,
    /// The position just past the input, for errors at its end.
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next)
    }

    /// Consumes the next token if it is the symbol `c`, returning its position.
    fn eat(&mut self, c: char) -> Option<usize> {
        match self.peek() {
            Some(Token {
                kind: Kind::Symbol(s),
                position,
            }) if *s == c => {
                let position = *position;
                self.next += 1;
                Some(position)
            }
            _ => None,
        }
    }

    fn expected(&self, what: &str) -> String {
        match self.peek() {
            Some(token) => format!(
                "syntax error at position {}: expected {what}, found {}",
                token.position,
                token.kind.describe()
            ),
            None => format!("syntax error at position {}: expected {what}", self.end),
        }
    }

    /// Runs `f` one nesting level deeper, refusing to go past [`MAX_NESTING`].
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> Result<f64, String>) -> Result<f64, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!(
                "the expression is nested too deeply (the limit is {MAX_NESTING} levels)"
            ));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn expression(&mut self) -> Result<f64, String> {
        let mut value = self.term()?;
        loop {
            if let Some(at) = self.eat('+') {
                let rhs = self.term()?;
                value = finite(cancel_noise(value + rhs, value, rhs), at)?;
            } else if let Some(at) = self.eat('-') {
                let rhs = self.term()?;
                value = finite(cancel_noise(value - rhs, value, rhs), at)?;
            } else {
                return Ok(value);
            }
        }
    }

    fn term(&mut self) -> Result<f64, String> {
        let mut value = self.unary()?;
        loop {
            if let Some(at) = self.eat('*') {
                let rhs = self.unary()?;
                value = finite(value * rhs, at)?;
            } else if let Some(at) = self.eat('/') {
                let rhs = self.unary()?;
                if rhs == 0.0 {
                    return Err(format!("division by zero at position {at}"));
                }
                value = finite(value / rhs, at)?;
            } else if let Some(at) = self.eat('%') {
                let rhs = self.unary()?;
                if rhs == 0.0 {
                    return Err(format!("remainder of a division by zero at position {at}"));
                }
                value = finite(value % rhs, at)?;
            } else {
                return Ok(value);
            }
        }
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.eat('-').is_some() {
            self.nested(|p| p.unary().map(|v| -v))
        } else if self.eat('+').is_some() {
            self.nested(Self::unary)
        } else {
            self.power()
        }
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.primary()?;
        let Some(at) = self.eat('^') else {
            return Ok(base);
        };
        let exponent = self.nested(Self::unary)?;
        let value = base.powf(exponent);
        if value.is_nan() {
            return Err(format!(
                "{} ^ {} is not a real number (at position {at})",
                format_number(base),
                format_number(exponent)
            ));
        }
        if base == 0.0 && exponent < 0.0 {
            return Err(format!("division by zero at position {at} (0 ^ negative)"));
        }
        finite(value, at)
    }

    fn primary(&mut self) -> Result<f64, String> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.expected("a number, a name or '('"));
        };
        match token.kind {
            Kind::Number(value) => {
                self.next += 1;
                Ok(value)
            }
            Kind::Symbol('(') => {
                self.next += 1;
                let value = self.nested(Self::expression)?;
                if self.eat(')').is_none() {
                    return Err(self.expected("')'"));
                }
                Ok(value)
            }
            Kind::Name(name) => {
                self.next += 1;
                if self.eat('(').is_some() {
                    self.nested(|p| p.call(&name, token.position))
                } else {
                    constant(&name, token.position)
                }
            }
            Kind::Symbol(_) => Err(self.expected("a number, a name or '('")),
        }
    }

    /// A function call, after its `(`.
    fn call(&mut self, name: &str, position: usize) -> Result<f64, String> {
        let mut args = vec![self.expression()?];
        while self.eat(',').is_some() {
            args.push(self.expression()?);
        }
        if self.eat(')').is_none() {
            return Err(self.expected("',' or ')'"));
        }
        apply(name, &args, position)
    }
}

/// Zero instead of a result that is only rounding error: a sum far below the precision of its
/// operands (`0.1 + 0.2 - 0.3` is 5.6e-17 in floating point, and means 0).
fn cancel_noise(result: f64, a: f64, b: f64) -> f64 {
    if result.abs() <= NOISE * a.abs().max(b.abs()) {
        0.0
    } else {
        result
    }
}

/// Relative size under which a result is rounding noise: a few units in the last place.
const NOISE: f64 = 4.0 * f64::EPSILON;

/// `value` if finite; overflow otherwise.
fn finite(value: f64, at: usize) -> Result<f64, String> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!(
            "overflow at position {at}: the result is too large"
        ))
    }
}

fn constant(name: &str, position: usize) -> Result<f64, String> {
    match name {
        "pi" => Ok(std::f64::consts::PI),
        "e" => Ok(std::f64::consts::E),
        _ if function(name).is_some() => Err(format!(
            "'{name}' at position {position} is a function: write {name}(...)"
        )),
        _ => Err(format!(
            "unknown name '{name}' at position {position} (the constants are pi and e)"
        )),
    }
}

/// The one-argument functions.
fn function(name: &str) -> Option<fn(f64) -> f64> {
    Some(match name {
        "sqrt" => f64::sqrt,
        "abs" => f64::abs,
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "asin" => f64::asin,
        "acos" => f64::acos,
        "atan" => f64::atan,
        "ln" => f64::ln,
        "log" => f64::log10,
        "log2" => f64::log2,
        "exp" => f64::exp,
        "floor" => f64::floor,
        "ceil" => f64::ceil,
        "round" => f64::round,
        _ => return None,
    })
}

fn apply(name: &str, args: &[f64], position: usize) -> Result<f64, String> {
    let value = match name {
        "min" => args.iter().copied().fold(f64::INFINITY, f64::min),
        "max" => args.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        _ => {
            let Some(f) = function(name) else {
                return Err(if matches!(name, "pi" | "e") {
                    format!("'{name}' at position {position} is a constant, not a function")
                } else {
                    format!(
                        "unknown function '{name}' at position {position} (the functions are \
                         sqrt abs sin cos tan asin acos atan ln log log2 exp floor ceil round \
                         min max)"
                    )
                });
            };
            let [x] = args else {
                return Err(format!(
                    "{name}() takes 1 argument, got {} (at position {position})",
                    args.len()
                ));
            };
            let value = f(*x);
            // sin(pi) is 1.2e-16 in floating point: the error of pi, not a result.
            if matches!(name, "sin" | "cos" | "tan") && value.abs() <= NOISE * x.abs() {
                0.0
            } else {
                value
            }
        }
    };
    if value.is_finite() {
        return Ok(value);
    }
    let call = format!(
        "{name}({})",
        args.iter()
            .map(|a| format_number(*a))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Err(if value.is_nan() {
        format!("{call} is not a real number")
    } else if args.contains(&0.0) {
        format!("{call} is infinite")
    } else {
        format!("overflow: {call} is too large")
    })
}

/// The result as the model should read it (see [`evaluate`]).
fn format_number(x: f64) -> String {
    /// 2^53: below it every whole `f64` is an exact integer.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if x == 0.0 {
        return "0".to_string();
    }
    if x.fract() == 0.0 && x.abs() < EXACT {
        return format!("{}", x as i64);
    }
    // 12 significant digits: what survives of a decimal through a few float operations.
    let rounded = parse_f64(&format!("{x:.11e}")).unwrap_or(x);
    let magnitude = rounded.abs();
    if rounded.fract() == 0.0 && magnitude < 1e15 {
        format!("{}", rounded as i64)
    } else if !(1e-7..1e15).contains(&magnitude) {
        format!("{rounded:e}")
    } else {
        format!("{rounded}")
    }
}

/// The calculator reads numbers with the protocol's `parse_f64` where it used `str::parse`:
/// these hold the two equal on every text that reaches either call.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use proptest::prelude::*;

    use super::{tokenize, Kind};

    fn core(text: &str) -> Option<u64> {
        text.parse::<f64>().ok().map(f64::to_bits)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// A number token is whatever the tokenizer scans from a digit or `.`: digits and dots,
        /// then an exponent only when digits follow it.
        #[test]
        fn number_tokens_read_as_str_parse_read_them(
            text in "[0-9.]{1,8}([eE][+-]?[0-9]{0,3})?[0-9.]{0,3}"
        ) {
            match tokenize(&text) {
                Ok(tokens) => {
                    for (i, token) in tokens.iter().enumerate() {
                        if let Kind::Number(value) = token.kind {
                            let end = tokens.get(i + 1).map_or(text.len(), |t| t.position - 1);
                            let number = &text[token.position - 1..end];
                            prop_assert_eq!(Some(value.to_bits()), core(number), "{:?}", text);
                        }
                    }
                }
                Err(error) => {
                    let invalid = error
                        .split_once(": invalid number '")
                        .and_then(|(_, rest)| rest.strip_suffix('\''));
                    match invalid {
                        Some(number) => prop_assert_eq!(core(number), None, "{:?}", text),
                        // Only the first number can have an exponent of three digits, and then
                        // it is the whole text (the rest is a name, or makes it invalid).
                        None => {
                            prop_assert!(error.starts_with("the number at position 1 is too large"));
                            prop_assert!(text.parse::<f64>().is_ok_and(f64::is_infinite));
                        }
                    }
                }
            }
        }

        /// The rounding step reads back what `{:.11e}` wrote, for any float.
        #[test]
        fn rounded_numbers_read_as_str_parse_read_them(x in any::<f64>()) {
            let text = format!("{x:.11e}");
            prop_assert_eq!(super::parse_f64(&text).map(f64::to_bits), core(&text), "{}", text);
        }
    }
}
