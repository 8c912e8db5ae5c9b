//! The `web_fetch` URL check over a list of URLs, for the differential test against Node's
//! WHATWG `URL` (`tests/urls/urls.test.mjs`): reads a JSON array of strings (the file named by
//! the first argument), writes a JSON array of verdicts, one per URL in order:
//! `{"fetch": <serialized url>}` when the check lets it through, `{"refused": <why>}` when not.

use std::io::Write;

use serde_json::{json, Value};
use weft_agent::tools::checked_url;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: url_verdicts <corpus.json>")?;
    let urls: Vec<String> = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let verdicts: Vec<Value> = urls
        .iter()
        .map(|url| match checked_url(url) {
            Ok(fetch) => json!({ "fetch": fetch }),
            Err(why) => json!({ "refused": why }),
        })
        .collect();
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &verdicts)?;
    out.flush()?;
    Ok(())
}
