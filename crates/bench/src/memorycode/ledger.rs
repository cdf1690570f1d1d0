//! A MemoryCode dialogue's pivots as a ledger: the benchmark knows its file format and
//! builds the core's ledger from it (the ledger knows no benchmark).

use super::data::{Dialogue, Topics};
use anyhow::{bail, Result};
use pivot_python::pivots::Ledger;

impl Dialogue {
    /// Pivots of a MemoryCode dialogue: each `instruction-add` / `instruction-update` of a
    /// session's `type` list takes, in order, the next pair of `session_regex` and the next
    /// `[pivot_id, version]` of the dialogue's `instructions` (fillers carry no rule).
    pub fn ledger(&self, topics: Option<&Topics>) -> Result<Ledger> {
        let d = self;
        let mut ledger = Ledger::default();
        // Pivot positions by id and catalogue entries by pivot id (the first of each, as a
        // search would find): looked up once per instruction, so a dialogue of n sessions
        // builds in linear time.
        let mut index = std::collections::HashMap::new();
        let mut catalogue = std::collections::HashMap::new();
        for e in topics.map_or(&[][..], |t| &t.instructions[..]) {
            catalogue.entry(e.id).or_insert(e);
        }
        for (s, session) in d.sessions.iter().enumerate() {
            // A pair with a negative version is left out, as it always was.
            let mut ids =
                (d.pivots_at(s).iter()).filter_map(|&(id, v)| Some((id, usize::try_from(v).ok()?)));
            let mut pairs = session.session_regex.iter();
            for (i, ty) in session.types.iter().enumerate() {
                if ty != "instruction-add" && ty != "instruction-update" {
                    continue;
                }
                let Some(pair) = pairs.next() else {
                    bail!("session {s}: `{ty}` has no matching pair in session_regex");
                };
                let (pid, version) = ids.next().unwrap_or((-1, 0));
                let id = if pid >= 0 {
                    format!("mc-{pid}")
                } else {
                    format!("s{s}-{i}")
                };
                let text = session.topic.get(i).cloned().unwrap_or_default();
                ledger.give_indexed(
                    &mut index,
                    &id,
                    "memorycode",
                    s,
                    text,
                    pair.kind,
                    pair.rule.clone(),
                );
                let p = &mut ledger.pivots[index[&id]];
                // The first version given at this session (versions are in session order).
                let first = p.versions.partition_point(|v| v.session < s);
                if let Some(v) = p.versions.get_mut(first) {
                    v.version = version;
                }
                if let Some(entry) = catalogue.get(&pid) {
                    p.catalogue = entry.text.clone();
                }
            }
        }
        Ok(ledger)
    }
}
