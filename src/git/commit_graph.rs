//! A reader of git's commit-graph files (`objects/info/commit-graph`, or the split chain
//! under `objects/info/commit-graphs/`), for first-parent walks that need parents and root
//! trees without inflating commit objects, and for the changed-path Bloom filters
//! (`git commit-graph write --changed-paths`) that say which commits cannot have changed a
//! path. Format: gitformat-commit-graph(5).
//!
//! Best effort, like git's own use: any surprise (unknown hash, truncated chunk) means
//! "no graph", and the caller reads commit objects instead.

use std::path::Path;

const HEADER_LEN: usize = 8;
const HASH_LEN: usize = 20;
const NO_PARENT: u32 = 0x7000_0000;

/// One graph file; positions in it are offset by the commits of the layers below.
struct Layer {
    data: memmap2::Mmap,
    count: u32,
    base: u32,
    fanout: usize,
    oids: usize,
    cdat: usize,
    bloom: Option<Bloom>,
}

/// A layer's changed-path filters: where BIDX and BDAT start, and BDAT's settings.
#[derive(Debug, Clone, Copy)]
struct Bloom {
    bidx: usize,
    /// The first filter's first byte (after BDAT's 12-byte header).
    data: usize,
    data_end: usize,
    /// 1: git's first murmur3, which read bytes as signed (wrong for bytes ≥ 0x80); 2: fixed.
    version: u32,
    hashes: u32,
}

/// A path's two murmur3 hashes, from which each of a filter's positions is derived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BloomKey {
    h0: u32,
    h1: u32,
    /// Whether the path is ASCII: version-1 filters hashed other bytes wrongly, so only
    /// ASCII keys can be looked up in them.
    ascii: bool,
}

/// The two seeds gitformat-commit-graph(5) gives for the hashes.
const SEED0: u32 = 0x293a_e76f;
const SEED1: u32 = 0x7e64_6e2c;

/// murmur3's 32-bit hash (the algorithm as published: 4-byte little-endian blocks, then the
/// tail, then the finaliser).
fn murmur3(seed: u32, data: &[u8]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |mut k: u32| {
        k = k.wrapping_mul(C1);
        k = k.rotate_left(15);
        k.wrapping_mul(C2)
    };
    let mut h = seed;
    let blocks = data.chunks_exact(4);
    let tail = blocks.remainder();
    for b in blocks {
        h ^= mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let mut k = 0u32;
    for (i, &byte) in tail.iter().enumerate() {
        k ^= u32::from(byte) << (8 * i);
    }
    if !tail.is_empty() {
        h ^= mix(k);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

impl BloomKey {
    /// The key of one path (no leading or trailing slash), as git adds it to a filter.
    pub(crate) fn new(path: &str) -> BloomKey {
        let b = path.as_bytes();
        BloomKey {
            h0: murmur3(SEED0, b),
            h1: murmur3(SEED1, b),
            ascii: b.is_ascii(),
        }
    }

    /// The keys git's own path-limited walks look up: the path and each directory above it
    /// (git adds every leading directory of a changed path to the filter).
    pub(crate) fn with_dirs(path: &str) -> Vec<BloomKey> {
        let mut out = vec![BloomKey::new(path)];
        let mut p = path;
        while let Some((dir, _)) = p.rsplit_once('/') {
            out.push(BloomKey::new(dir));
            p = dir;
        }
        out
    }
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
    fn parse(data: memmap2::Mmap, base: u32) -> Option<Layer> {
        if data.get(..4)? != b"CGPH" || data[4] != 1 || data[5] != 1 {
            return None;
        }
        let chunks = data[6] as usize;
        let (mut fanout, mut oids, mut cdat) = (None, None, None);
        let (mut bidx, mut bdat) = (None, None);
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
                b"BIDX" => bidx = Some(off),
                b"BDAT" => bdat = Some((off, i)),
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
        // A chunk ends where the next one in the table starts.
        let end_of = |i: usize| ends.get(i + 1).copied();
        let bloom = match (bidx, bdat) {
            (Some(bidx), Some((bdat, i))) => {
                end_of(i).and_then(|end| Bloom::parse(&data, n, bidx, bdat, end))
            }
            _ => None,
        };
        Some(Layer {
            data,
            count,
            base,
            fanout,
            oids,
            cdat,
            bloom,
        })
    }

    /// What this layer's filter says of commit `local` and the keys: `Some(false)` when
    /// some key is surely absent (the commit did not change the path), `Some(true)` when
    /// all may be present, `None` when there is no filter to ask.
    fn maybe_changed(&self, local: usize, keys: &[BloomKey]) -> Option<bool> {
        let b = self.bloom?;
        if b.version == 1 && keys.iter().any(|k| !k.ascii) {
            return None;
        }
        let end = be32(&self.data, b.bidx + local * 4)? as usize;
        let start = match local {
            0 => 0,
            _ => be32(&self.data, b.bidx + (local - 1) * 4)? as usize,
        };
        if end < start || b.data + end > b.data_end {
            return None;
        }
        // A commit whose filter was not computed has none (length 0).
        let filter = &self.data[b.data + start..b.data + end];
        if filter.is_empty() {
            return None;
        }
        let bits = filter.len() as u64 * 8;
        let has = |k: &BloomKey| {
            (0..b.hashes).all(|i| {
                let pos = u64::from(k.h0.wrapping_add(i.wrapping_mul(k.h1))) % bits;
                filter[(pos / 8) as usize] & (1u8 << (pos % 8)) != 0
            })
        };
        Some(keys.iter().all(has))
    }
}

impl Bloom {
    fn parse(data: &[u8], n: usize, bidx: usize, bdat: usize, bdat_end: usize) -> Option<Bloom> {
        if bidx + n * 4 > data.len() || bdat + 12 > bdat_end || bdat_end > data.len() {
            return None;
        }
        let version = be32(data, bdat)?;
        let hashes = be32(data, bdat + 4)?;
        // Versions git writes: 1 and 2 (the same but for bytes ≥ 0x80); others are unknown.
        if !(1..=2).contains(&version) || hashes == 0 || hashes > 32 {
            return None;
        }
        Some(Bloom {
            bidx,
            data: bdat + 12,
            data_end: bdat_end,
            version,
            hashes,
        })
    }
}

impl Layer {
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
            let file = std::fs::File::open(f).ok()?;
            // SAFETY: git writes a new graph beside the old and renames it into place; a
            // mapped file is never rewritten.
            let data = unsafe { super::pack::map(&file)? };
            let layer = Layer::parse(data, base)?;
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

    /// How many commits the graph holds, all layers together.
    pub(crate) fn len(&self) -> u32 {
        self.layers.iter().map(|l| l.count).sum()
    }

    /// Whether any layer carries changed-path filters.
    pub(crate) fn has_filters(&self) -> bool {
        self.layers.iter().any(|l| l.bloom.is_some())
    }

    /// What the changed-path filter of the commit at `pos` says of `keys` (see
    /// `Layer::maybe_changed`); `None` without a filter.
    pub(crate) fn maybe_changed(&self, pos: u32, keys: &[BloomKey]) -> Option<bool> {
        let (layer, local) = self.layer_of(pos)?;
        layer.maybe_changed(local, keys)
    }

    /// The layer holding a graph position, and the position within it.
    fn layer_of(&self, pos: u32) -> Option<(&Layer, usize)> {
        let layer = self
            .layers
            .iter()
            .rev()
            .find(|l| pos >= l.base && pos < l.base + l.count)?;
        Some((layer, (pos - layer.base) as usize))
    }

    /// The id of the commit at a graph position: one read where `get` makes two (walks that
    /// only need a parent's id touch half the memory).
    pub(crate) fn id_at(&self, pos: u32) -> Option<&[u8]> {
        let (layer, local) = self.layer_of(pos)?;
        Some(layer.oid(local))
    }

    /// The committer date (seconds since the epoch) of the commit at a graph position.
    pub(crate) fn date(&self, pos: u32) -> Option<u64> {
        let (layer, local) = self.layer_of(pos)?;
        let at = layer.cdat + local * (HASH_LEN + 16) + HASH_LEN + 8;
        // The low 34 bits; the 30 above them are the generation number.
        Some(be64(&layer.data, at)? & ((1 << 34) - 1))
    }

    /// The commit at a graph position.
    pub(crate) fn get(&self, pos: u32) -> Option<GraphCommit> {
        let (layer, local) = self.layer_of(pos)?;
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
    fn murmur3_matches_the_published_vectors() {
        // Test vectors of the reference implementation (MurmurHash3_x86_32).
        assert_eq!(murmur3(0, b""), 0);
        assert_eq!(murmur3(1, b""), 0x514e_28b7);
        assert_eq!(murmur3(0xffff_ffff, b""), 0x81f1_6f39);
        assert_eq!(murmur3(0, b"\xff\xff\xff\xff"), 0x7629_3b50);
        assert_eq!(murmur3(0, b"!Ce\x87"), 0xf55b_516b);
        assert_eq!(murmur3(0x5082_edee, b"!Ce\x87"), 0x2362_f9de);
        assert_eq!(murmur3(0, b"!Ce"), 0x7e4a_8634);
        assert_eq!(murmur3(0, b"!C"), 0xa0f7_b07a);
        assert_eq!(murmur3(0, b"!"), 0x72661cf4);
        assert_eq!(murmur3(0x9747_b28c, b"Hello, world!"), 0x2488_4cba);
    }

    #[test]
    fn keys_cover_the_path_and_its_directories() {
        let k = BloomKey::with_dirs("src/twisted/web/client.py");
        assert_eq!(k.len(), 4);
        assert_eq!(k[3], BloomKey::new("src"));
        assert!(!BloomKey::new("données/é.py").ascii);
    }

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

#[cfg(test)]
mod filter_tests {
    use std::path::Path;

    use crate::git::Repo;
    use crate::git::testgit::git;

    const PATHS: [&str; 6] = [
        "a/b/c.py",
        "a/x.py",
        "d/é.py",
        "top.txt",
        "deep/1/2/3/f.py",
        "deep/1/g.py",
    ];

    /// A history where commit `i` changes the paths whose bit is set in a fixed pattern.
    fn history(dir: &Path) -> Vec<Vec<&'static str>> {
        git(dir, &["init", "-q", "-b", "main", "."]);
        let mut touched = Vec::new();
        for i in 0..48u32 {
            let mut t = Vec::new();
            for (k, p) in PATHS.iter().enumerate() {
                if i == 0 || (i.wrapping_mul(2_654_435_761) >> (k * 3)) % 5 == 0 {
                    let f = dir.join(p);
                    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
                    std::fs::write(&f, format!("{p} {i}\n")).unwrap();
                    t.push(*p);
                }
            }
            std::fs::write(dir.join("always.txt"), format!("{i}\n")).unwrap();
            git(dir, &["add", "-A"]);
            git(dir, &["commit", "-q", "-m", &format!("c{i}")]);
            touched.push(t);
        }
        touched
    }

    #[test]
    fn filters_never_deny_a_change_and_deny_most_others() {
        for version in ["1", "2"] {
            let dir = tempfile::tempdir().unwrap();
            let d = dir.path();
            let touched = history(d);
            git(
                d,
                &[
                    "-c",
                    &format!("commitGraph.changedPathsVersion={version}"),
                    "commit-graph",
                    "write",
                    "--reachable",
                    "--changed-paths",
                ],
            );
            let repo = Repo::discover(d).unwrap();
            let head = repo.resolve_commit("HEAD").unwrap();
            let root = repo.resolve_commit("HEAD~47").unwrap();
            // The chain after the root: commits 1..48.
            let chain = repo.first_parent_chain(root, head).unwrap();
            let ids: Vec<_> = chain.iter().map(|c| c.id).collect();
            for p in PATHS {
                let f = repo.path_filters(&ids, p).expect("a graph with filters");
                if version == "1" && !p.is_ascii() {
                    assert!(f.iter().all(Option::is_none), "{p}: v1 cannot hash it");
                    continue;
                }
                let mut denied = 0;
                let mut untouched = 0;
                for (i, answer) in f.iter().enumerate() {
                    let changed = touched[i + 1].contains(&p);
                    assert!(answer.is_some(), "v{version} {p} commit {i}: no filter");
                    if changed {
                        assert_ne!(*answer, Some(false), "v{version} {p}: a change denied");
                    } else {
                        untouched += 1;
                        denied += usize::from(*answer == Some(false));
                    }
                }
                assert!(
                    denied * 10 >= untouched * 8,
                    "v{version} {p}: only {denied} of {untouched} untouched commits denied"
                );
            }
        }
    }
}
