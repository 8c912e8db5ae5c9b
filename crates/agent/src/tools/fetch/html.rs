//! An HTML page as the model reads it: its text, without markup.

/// The readable text of an HTML document: tags dropped (block-level ones become line breaks,
/// list items `- `), `script`/`style`/`noscript`/`template`/`svg` contents and comments
/// dropped, common character references decoded, whitespace collapsed outside `pre`.
/// Tolerant of any input, well-formed or not; it reads, it does not validate.
pub(super) fn html_to_text(html: &str) -> String {
    let mut text = TextBuilder::default();
    let mut rest = html;
    let mut pre_depth = 0usize;
    while let Some(c) = rest.chars().next() {
        if c == '<' {
            if let Some(after) = rest.strip_prefix("<!--") {
                rest = after.find("-->").map_or("", |end| &after[end + 3..]);
                continue;
            }
            let Some(tag) = parse_tag(rest) else {
                text.push_char('<', pre_depth > 0);
                rest = &rest[1..];
                continue;
            };
            rest = &rest[tag.len..];
            if !tag.closing
                && matches!(
                    tag.name.as_str(),
                    "script" | "style" | "noscript" | "template" | "svg"
                )
                && !tag.self_closing
            {
                rest = skip_element(rest, &tag.name);
                continue;
            }
            match tag.name.as_str() {
                "pre" if tag.closing => {
                    pre_depth = pre_depth.saturating_sub(1);
                    text.newline();
                }
                "pre" => {
                    pre_depth += 1;
                    text.newline();
                }
                "br" => text.hard_newline(),
                "li" if !tag.closing => {
                    text.newline();
                    text.push_str("- ");
                }
                "td" | "th" if !tag.closing => text.space(),
                name if is_block(name) => text.paragraph(),
                _ => {}
            }
        } else if c == '&' {
            let (decoded, len) = entity(rest);
            match decoded {
                Some(d) => text.push_char(d, pre_depth > 0),
                None => text.push_char('&', pre_depth > 0),
            }
            rest = &rest[len..];
        } else {
            text.push_char(c, pre_depth > 0);
            rest = &rest[c.len_utf8()..];
        }
    }
    text.finish()
}

struct Tag {
    name: String,
    closing: bool,
    self_closing: bool,
    /// Bytes of input the tag spans, `<` to `>` inclusive.
    len: usize,
}

/// A tag at the start of `s` (which starts with `<`), or `None` if this `<` is just text.
fn parse_tag(s: &str) -> Option<Tag> {
    let bytes = s.as_bytes();
    let mut i = 1;
    let closing = bytes.get(i) == Some(&b'/');
    if closing {
        i += 1;
    }
    let special = matches!(bytes.get(i), Some(b'!' | b'?'));
    if !special && !bytes.get(i).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let name_start = i;
    while bytes
        .get(i)
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'!' | b'?' | b':'))
    {
        i += 1;
    }
    let name = s[name_start..i].to_ascii_lowercase();
    // To the closing '>', skipping quoted attribute values.
    let mut quote: Option<u8> = None;
    while let Some(&b) = bytes.get(i) {
        match (quote, b) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => {
                return Some(Tag {
                    self_closing: i > 0 && bytes[i - 1] == b'/',
                    name,
                    closing,
                    len: i + 1,
                })
            }
            (None, _) => {}
        }
        i += 1;
    }
    // Unterminated: the rest of the document is inside the tag.
    Some(Tag {
        name,
        closing,
        self_closing: false,
        len: s.len(),
    })
}

/// The input after the closing tag of `name` (case-insensitive); `""` if it never closes.
fn skip_element<'a>(rest: &'a str, name: &str) -> &'a str {
    let closing = format!("</{name}");
    let Some(start) = rest
        .as_bytes()
        .windows(closing.len())
        .position(|w| w.eq_ignore_ascii_case(closing.as_bytes()))
    else {
        return "";
    };
    match rest[start..].find('>') {
        Some(end) => &rest[start + end + 1..],
        None => "",
    }
}

fn is_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "div"
            | "section"
            | "article"
            | "main"
            | "header"
            | "footer"
            | "nav"
            | "aside"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "ul"
            | "ol"
            | "dl"
            | "dt"
            | "dd"
            | "table"
            | "tr"
            | "blockquote"
            | "hr"
            | "title"
            | "form"
            | "figure"
            | "figcaption"
            | "details"
            | "summary"
            | "address"
            | "body"
            | "head"
            | "html"
    )
}

/// The character reference at the start of `s` (which starts with `&`) and the bytes it
/// spans; `(None, 1)` when it is not one, so the `&` is kept as text.
fn entity(s: &str) -> (Option<char>, usize) {
    let Some(end) = s.as_bytes().iter().take(34).position(|&b| b == b';') else {
        return (None, 1);
    };
    let name = &s[1..end];
    let decoded = if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => number.parse::<u32>().ok(),
        };
        code.map(|c| char::from_u32(c).unwrap_or('\u{fffd}'))
    } else {
        match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            "ndash" => Some('–'),
            "mdash" => Some('—'),
            "hellip" => Some('…'),
            "lsquo" => Some('‘'),
            "rsquo" => Some('’'),
            "ldquo" => Some('“'),
            "rdquo" => Some('”'),
            "laquo" => Some('«'),
            "raquo" => Some('»'),
            "middot" => Some('·'),
            "bull" => Some('•'),
            "copy" => Some('©'),
            "reg" => Some('®'),
            "trade" => Some('™'),
            "times" => Some('×'),
            "deg" => Some('°'),
            "euro" => Some('€'),
            _ => None,
        }
    };
    match decoded {
        Some(c) => (Some(c), end + 1),
        None => (None, 1),
    }
}

/// Collects text, collapsing whitespace: runs of spaces become one, at most one blank line
/// between blocks, no spaces at line ends.
#[derive(Default)]
struct TextBuilder {
    out: String,
    /// A space is due before the next character.
    space: bool,
    /// Line breaks due before the next character (capped at 2: one blank line).
    newlines: usize,
}

impl TextBuilder {
    fn push_char(&mut self, c: char, preformatted: bool) {
        if preformatted {
            self.flush();
            self.out.push(c);
        } else if c.is_whitespace() {
            self.space();
        } else {
            self.flush();
            self.out.push(c);
        }
    }

    fn push_str(&mut self, s: &str) {
        self.flush();
        self.out.push_str(s);
    }

    fn space(&mut self) {
        self.space = true;
    }

    fn newline(&mut self) {
        self.newlines = self.newlines.max(1);
    }

    /// `<br>`: a line break even where one is already due.
    fn hard_newline(&mut self) {
        self.newlines = (self.newlines + 1).min(2);
    }

    fn paragraph(&mut self) {
        self.newlines = 2;
    }

    fn flush(&mut self) {
        if self.out.is_empty() {
            self.newlines = 0;
            self.space = false;
            return;
        }
        if self.newlines > 0 {
            while self.out.ends_with(' ') {
                self.out.pop();
            }
            for _ in 0..self.newlines {
                self.out.push('\n');
            }
        } else if self.space && !self.out.ends_with(['\n', ' ']) {
            self.out.push(' ');
        }
        self.newlines = 0;
        self.space = false;
    }

    fn finish(mut self) -> String {
        let trimmed = self.out.trim_end().len();
        self.out.truncate(trimmed);
        self.out
    }
}
