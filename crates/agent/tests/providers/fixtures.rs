//! Every fixture, however it is split.

use super::*;

#[test]
fn every_fixture_is_listed() {
    let mut on_disk = BTreeSet::new();
    for dir in std::fs::read_dir(FIXTURES).expect("fixtures folder") {
        let dir = dir.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("provider folder") {
            let file = file.expect("entry").path();
            let rel = file.strip_prefix(FIXTURES).expect("under fixtures");
            on_disk.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    let listed: BTreeSet<String> = ALL_FIXTURES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(on_disk, listed, "ALL_FIXTURES must name every fixture file");
}

#[test]
fn every_fixture_decodes_the_same_however_it_is_split() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        let whole = decode_whole(*provider, &body);
        let whole_merged = merged(&whole.deltas);
        let bytewise = decode_pieces(*provider, body.chunks(1));
        assert_eq!(
            merged(&bytewise.deltas),
            whole_merged,
            "{name}: byte by byte"
        );
        assert_eq!(bytewise.end, whole.end, "{name}: byte by byte");
        assert_eq!(
            bytewise.push_errors, whole.push_errors,
            "{name}: byte by byte"
        );
        for seed in 1..=64 {
            let split = decode_pieces(*provider, random_pieces(&body, seed));
            assert_eq!(merged(&split.deltas), whole_merged, "{name}: seed {seed}");
            assert_eq!(split.end, whole.end, "{name}: seed {seed}");
            assert_eq!(split.push_errors, whole.push_errors, "{name}: seed {seed}");
        }
    }
}

/// `poll_merged` after each push: the deltas of every read, each read's merged.
fn decode_reads_merged<'a>(
    provider: Provider,
    pieces: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<Vec<Delta>> {
    let mut decoder = StreamDecoder::new(provider);
    let mut reads = Vec::new();
    for piece in pieces {
        let _ = decoder.push(piece);
        reads.push(std::iter::from_fn(|| decoder.poll_merged()).collect::<Vec<_>>());
    }
    let _ = decoder.finish();
    reads.push(std::iter::from_fn(|| decoder.poll_merged()).collect());
    assert_eq!(decoder.poll_merged(), None);
    reads
}

#[test]
fn poll_merged_gives_one_delta_per_kind_per_read_and_loses_nothing() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        let whole = decode_whole(*provider, &body);
        // One read: exactly the merge of everything.
        let one: Vec<Delta> = decode_reads_merged(*provider, [&body[..]])
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(one, merged(&whole.deltas), "{name}: one read");
        for seed in 1..=16 {
            let reads = decode_reads_merged(*provider, random_pieces(&body, seed));
            for read in &reads {
                assert_eq!(
                    read,
                    &merged(read),
                    "{name}: seed {seed}: a read left a merge"
                );
            }
            let all: Vec<Delta> = reads.into_iter().flatten().collect();
            assert_eq!(merged(&all), merged(&whole.deltas), "{name}: seed {seed}");
        }
    }
}

#[test]
fn small_fixtures_decode_the_same_when_cut_at_every_byte() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        if body.len() > 6000 {
            continue;
        }
        let whole = decode_whole(*provider, &body);
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            let split = decode_pieces(*provider, [a, b]);
            assert_eq!(
                merged(&split.deltas),
                merged(&whole.deltas),
                "{name}: cut at {cut}"
            );
            assert_eq!(split.end, whole.end, "{name}: cut at {cut}");
        }
    }
}

#[test]
fn a_fixture_cut_in_half_is_reported_as_truncated() {
    for (name, provider) in ALL_FIXTURES {
        let body = fixture(name);
        let whole = decode_whole(*provider, &body);
        if whole.end.is_err() || whole.deltas.iter().any(|d| matches!(d, Delta::Error(_))) {
            continue;
        }
        let half = decode_whole(*provider, &body[..body.len() / 2]);
        assert_eq!(
            half.end,
            Err(ProviderError::Truncated {
                provider: *provider
            }),
            "{name}"
        );
        // What did arrive is still consistent, and no call cut short was ended.
        let summary = summarize(&half.deltas);
        assert_eq!(summary.finish, None, "{name}");
        let full = summarize(&whole.deltas);
        for (cut, complete) in summary.calls.iter().zip(&full.calls) {
            if cut.ended {
                assert_eq!(cut.arguments, complete.arguments, "{name}: {}", cut.name);
            }
        }
    }
}
