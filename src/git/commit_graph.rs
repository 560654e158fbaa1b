//! A reader of git's commit-graph files (`objects/info/commit-graph`, or the split chain
//! under `objects/info/commit-graphs/`), for first-parent walks that need parents and root
//! trees without inflating commit objects. Format: gitformat-commit-graph(5).
//!
//! Best effort, like git's own use: any surprise (unknown hash, truncated chunk) means
//! "no graph", and the caller reads commit objects instead.

use std::path::Path;

const HEADER_LEN: usize = 8;
const HASH_LEN: usize = 20;
const NO_PARENT: u32 = 0x7000_0000;

/// One graph file; positions in it are offset by the commits of the layers below.
struct Layer {
    data: Vec<u8>,
    count: u32,
    base: u32,
    fanout: usize,
    oids: usize,
    cdat: usize,
}

/// What the graph knows of one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GraphCommit {
    pub id: [u8; HASH_LEN],
    pub tree: [u8; HASH_LEN],
    /// Graph position of the first parent.
    pub first_parent: Option<u32>,
    pub merge: bool,
}

/// All layers of the commit-graph, lowest first.
pub(crate) struct CommitGraph {
    layers: Vec<Layer>,
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl Layer {
    fn parse(data: Vec<u8>, base: u32) -> Option<Layer> {
        if data.get(..4)? != b"CGPH" || data[4] != 1 || data[5] != 1 {
            return None;
        }
        let chunks = data[6] as usize;
        let (mut fanout, mut oids, mut cdat) = (None, None, None);
        let mut ends = Vec::with_capacity(chunks + 1);
        for i in 0..=chunks {
            let at = HEADER_LEN + i * 12;
            let id = data.get(at..at + 4)?;
            let off = usize::try_from(be64(&data, at + 4)?).ok()?;
            ends.push(off);
            match id {
                b"OIDF" => fanout = Some(off),
                b"OIDL" => oids = Some(off),
                b"CDAT" => cdat = Some(off),
                _ => {}
            }
        }
        let (fanout, oids, cdat) = (fanout?, oids?, cdat?);
        let count = be32(&data, fanout + 255 * 4)?;
        let n = count as usize;
        // Every chunk must fit in the file.
        if fanout + 256 * 4 > data.len()
            || oids + n * HASH_LEN > data.len()
            || cdat + n * (HASH_LEN + 16) > data.len()
            || ends.iter().any(|&e| e > data.len())
        {
            return None;
        }
        Some(Layer {
            data,
            count,
            base,
            fanout,
            oids,
            cdat,
        })
    }

    fn oid(&self, local: usize) -> &[u8] {
        let at = self.oids + local * HASH_LEN;
        &self.data[at..at + HASH_LEN]
    }

    fn find(&self, id: &[u8]) -> Option<u32> {
        let first = id[0] as usize;
        let lo = if first == 0 {
            0
        } else {
            be32(&self.data, self.fanout + (first - 1) * 4)? as usize
        };
        let hi = be32(&self.data, self.fanout + first * 4)? as usize;
        let (mut lo, mut hi) = (lo, hi.min(self.count as usize));
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.oid(mid).cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(self.base + mid as u32),
            }
        }
        None
    }
}

impl CommitGraph {
    /// Opens the graph of an objects directory; `None` when there is none or it looks wrong.
    pub(crate) fn open(objects: &Path) -> Option<CommitGraph> {
        let info = objects.join("info");
        let chain = info.join("commit-graphs").join("commit-graph-chain");
        let files: Vec<std::path::PathBuf> = match std::fs::read_to_string(&chain) {
            Ok(text) => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(|h| info.join("commit-graphs").join(format!("graph-{h}.graph")))
                .collect(),
            Err(_) => vec![info.join("commit-graph")],
        };
        let mut layers: Vec<Layer> = Vec::with_capacity(files.len());
        let mut base = 0u32;
        for f in files {
            let layer = Layer::parse(std::fs::read(f).ok()?, base)?;
            base = base.checked_add(layer.count)?;
            layers.push(layer);
        }
        (!layers.is_empty()).then_some(CommitGraph { layers })
    }

    /// The graph position of a commit, if the graph has it.
    pub(crate) fn find(&self, id: &[u8]) -> Option<u32> {
        if id.len() != HASH_LEN {
            return None;
        }
        self.layers.iter().rev().find_map(|l| l.find(id))
    }

    /// The commit at a graph position.
    pub(crate) fn get(&self, pos: u32) -> Option<GraphCommit> {
        let layer = self
            .layers
            .iter()
            .rev()
            .find(|l| pos >= l.base && pos < l.base + l.count)?;
        let local = (pos - layer.base) as usize;
        let at = layer.cdat + local * (HASH_LEN + 16);
        let d = &layer.data;
        let p1 = be32(d, at + HASH_LEN)?;
        let p2 = be32(d, at + HASH_LEN + 4)?;
        Some(GraphCommit {
            id: layer.oid(local).try_into().ok()?,
            tree: d[at..at + HASH_LEN].try_into().ok()?,
            first_parent: (p1 != NO_PARENT).then_some(p1),
            merge: p2 != NO_PARENT,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_garbage_graph_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(CommitGraph::open(dir.path()).is_none());
        std::fs::create_dir_all(dir.path().join("info")).unwrap();
        std::fs::write(
            dir.path().join("info/commit-graph"),
            b"CGPH\x01\x01\x03\x00garbage",
        )
        .unwrap();
        assert!(CommitGraph::open(dir.path()).is_none());
        std::fs::write(dir.path().join("info/commit-graph"), b"").unwrap();
        assert!(CommitGraph::open(dir.path()).is_none());
    }
}
