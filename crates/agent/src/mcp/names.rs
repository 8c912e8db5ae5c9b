//! The names the model sees for MCP tools: `<server>_<tool>`, in the alphabet and length every
//! provider accepts, and unique even where that mapping would merge two tools.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The longest tool name the providers accept (OpenAI, Anthropic: 64).
pub const MAX_MODEL_TOOL_NAME: usize = 64;

/// Hex digits of the hash suffix: 2^24 values, collisions among a catalog's few hundred
/// altered names are rare, and a collision is still resolved (a second round).
const HASH_DIGITS: usize = 6;

/// The model's name for every `(server, tool)` pair, in order: `<server>_<tool>` with every
/// character outside `[A-Za-z0-9_-]` replaced by `_`, cut to [`MAX_MODEL_TOOL_NAME`].
///
/// Where that would give one name to two different tools, or a name `reserved` says is taken
/// (a built-in tool), each name that sanitizing or cutting changed gets `_` and a short hash
/// of its server and tool name instead of its tail; a name needing no change keeps it. The
/// result depends on the set of pairs, not their order, so a catalog refreshed in another
/// order names its tools the same. The server hears the original name; the host keeps the map.
#[must_use]
pub fn model_tool_names(pairs: &[(&str, &str)], reserved: impl Fn(&str) -> bool) -> Vec<String> {
    let plain: Vec<(String, bool)> = pairs
        .iter()
        .map(|(server, tool)| plain_name(server, tool))
        .collect();
    // Every distinct pair behind each name, and whether its name was altered.
    let mut owners: BTreeMap<&str, BTreeMap<(&str, &str), bool>> = BTreeMap::new();
    for ((name, altered), pair) in plain.iter().zip(pairs) {
        owners
            .entry(name.as_str())
            .or_default()
            .insert(*pair, *altered);
    }
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut names: Vec<Option<String>> = Vec::with_capacity(pairs.len());
    // Names that need no suffix first, so a suffixed one can be checked against them all: a
    // name owned by one tool, or the one tool of a shared name that needed no change.
    for (name, altered) in &plain {
        let group = owners.get(name.as_str());
        let distinct = group.map_or(0, BTreeMap::len);
        let unaltered = group.map_or(0, |g| g.values().filter(|a| !**a).count());
        let keeps = distinct <= 1 || (!*altered && unaltered == 1);
        if keeps && !reserved(name) {
            taken.insert(name.clone());
            names.push(Some(name.clone()));
        } else {
            names.push(None);
        }
    }
    // The rest in a fixed order (by pair), so the result does not depend on the input order.
    let mut pending: Vec<usize> = (0..pairs.len()).filter(|&i| names[i].is_none()).collect();
    pending.sort_by_key(|&i| pairs[i]);
    let mut assigned: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for i in pending {
        let pair = pairs[i];
        // The same pair twice gets the same name: it is the same tool.
        if let Some(name) = assigned.get(&pair) {
            names[i] = Some(name.clone());
            continue;
        }
        let mut salt = 0u32;
        let name = loop {
            let candidate = suffixed(&plain[i].0, pair.0, pair.1, salt);
            if (!taken.contains(&candidate) && !reserved(&candidate)) || salt == u32::MAX {
                break candidate;
            }
            salt += 1;
        };
        taken.insert(name.clone());
        assigned.insert(pair, name.clone());
        names[i] = Some(name);
    }
    names.into_iter().map(Option::unwrap_or_default).collect()
}

/// `<server>_<tool>` sanitized and cut, and whether that changed anything.
fn plain_name(server: &str, tool: &str) -> (String, bool) {
    let raw = format!("{server}_{tool}");
    let mut altered = false;
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                altered = true;
                '_'
            }
        })
        .collect();
    if name.len() > MAX_MODEL_TOOL_NAME {
        name.truncate(MAX_MODEL_TOOL_NAME);
        altered = true;
    }
    (name, altered)
}

fn suffixed(plain: &str, server: &str, tool: &str, salt: u32) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    let bytes = server
        .bytes()
        .chain([0])
        .chain(tool.bytes())
        .chain(salt.to_le_bytes());
    for b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    let keep = plain.len().min(MAX_MODEL_TOOL_NAME - HASH_DIGITS - 1);
    format!(
        "{}_{:0width$x}",
        &plain[..keep],
        hash & 0x00ff_ffff,
        width = HASH_DIGITS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pairs: &[(&str, &str)]) -> Vec<String> {
        model_tool_names(pairs, |n| n == "get_time")
    }

    #[test]
    fn plain_names_stay_plain() {
        assert_eq!(
            names(&[("linear", "create_issue"), ("docs", "search-all")]),
            ["linear_create_issue", "docs_search-all"]
        );
    }

    #[test]
    fn sanitizing_that_merges_two_tools_adds_a_hash() {
        let got = names(&[
            ("fs", "read.file"),
            ("fs", "read_file"),
            ("fs", "read file"),
        ]);
        assert_eq!(got[1], "fs_read_file", "the unaltered name keeps it");
        assert!(got[0].starts_with("fs_read_file_") && got[0].len() == "fs_read_file_".len() + 6);
        assert!(got[2].starts_with("fs_read_file_"));
        assert_ne!(got[0], got[2]);
        // A lone altered name needs no hash.
        assert_eq!(names(&[("fs", "read.file")]), ["fs_read_file"]);
    }

    #[test]
    fn truncation_that_collides_adds_a_hash_within_64() {
        let long_a = "a".repeat(80);
        let long_b = format!("{}b", "a".repeat(79));
        let got = names(&[("s", &long_a), ("s", &long_b)]);
        assert!(got.iter().all(|n| n.len() == MAX_MODEL_TOOL_NAME));
        assert_ne!(got[0], got[1]);
        let alone = names(&[("s", &long_a)]);
        assert_eq!(alone[0], format!("s_{}", "a".repeat(62)));
    }

    #[test]
    fn two_unaltered_names_that_meet_both_get_a_hash() {
        let got = names(&[("a_b", "c"), ("a", "b_c")]);
        assert_ne!(got[0], got[1]);
        assert!(got.iter().all(|n| n.starts_with("a_b_c_")));
    }

    #[test]
    fn reserved_names_and_order_independence() {
        let got = names(&[("get", "time")]);
        assert!(got[0].starts_with("get_time_"), "{got:?}");
        let forward = names(&[("a", "x.y"), ("a", "x_y"), ("a", "x-y"), ("a", "x y")]);
        let backward = names(&[("a", "x y"), ("a", "x-y"), ("a", "x_y"), ("a", "x.y")]);
        assert_eq!(forward[0], backward[3]);
        assert_eq!(forward[3], backward[0]);
        assert!(forward.iter().all(|n| n
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')));
    }

    #[test]
    fn unicode_is_cut_on_the_ascii_name() {
        let got = names(&[("srv", &"é".repeat(70))]);
        assert!(got[0].len() <= MAX_MODEL_TOOL_NAME);
        assert!(got[0].is_ascii());
    }
}
