//! Replays every kept fuzz crasher, and the fuzz seeds (the golden transcripts, once per
//! dialect), through the fuzz entry points: none may panic, and every frame of the seeds reads
//! the same through the JSON reader as through serde_json.

use std::path::Path;

#[test]
fn fuzz_crashers_and_seeds_do_not_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut replayed = 0;
    for entry in std::fs::read_dir(root.join("fuzz-crashers")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        weft_protocol::fuzz::decode_reassemble(&std::fs::read(&path).unwrap());
        replayed += 1;
    }
    for (pick, dialect) in ["loom", "agentloop", "agentchat", "cueso"]
        .iter()
        .enumerate()
    {
        for entry in std::fs::read_dir(root.join("fixtures").join(dialect)).unwrap() {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            for line in bytes.split(|&b| b == b'\n') {
                weft_protocol::fuzz::json_reader(line);
            }
            let mut input = vec![pick as u8];
            input.extend(bytes);
            weft_protocol::fuzz::decode_reassemble(&input);
            replayed += 1;
        }
    }
    assert!(replayed >= 48, "only {replayed} inputs replayed");
}
