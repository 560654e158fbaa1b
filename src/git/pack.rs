//! Lock-free reads of objects from pack files, for the hot loops of the history walk.
//!
//! libgit2 serialises readers of one pack behind process-wide locks, so threads reading trees
//! in parallel slow each other down. This reader maps the `.idx`/`.pack` files once, shares
//! them between threads, and gives every thread its own inflater and delta-base cache.
//! It knows pack v2/v3 with index v2 and both delta kinds; anything else (loose objects,
//! alternates, an unexpected byte) is a miss, and the caller asks libgit2 instead.
//! Formats: gitformat-pack(5).

use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use memmap2::{Mmap, MmapOptions};

use super::idhash::IdMap;

/// Object kinds as packs number them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A commit object.
    Commit,
    /// A tree object.
    Tree,
    /// A blob object.
    Blob,
    /// An annotated tag object.
    Tag,
}

impl Kind {
    fn from_type(t: u8) -> Option<Kind> {
        match t {
            1 => Some(Kind::Commit),
            2 => Some(Kind::Tree),
            3 => Some(Kind::Blob),
            4 => Some(Kind::Tag),
            _ => None,
        }
    }
}

struct Pack {
    idx: Mmap,
    data: Mmap,
    count: usize,
}

const IDX_HEADER: usize = 8;
const FANOUT: usize = 256 * 4;

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Maps a file; small ones are read in at once (faulting pages one by one costs more).
///
/// # Safety
/// The file must not change while mapped (true of git's pack files and indexes).
pub(crate) unsafe fn map(file: &std::fs::File) -> Option<Mmap> {
    const POPULATE_BELOW: u64 = 8 << 20;
    let len = file.metadata().ok()?.len();
    let mut opts = MmapOptions::new();
    if len < POPULATE_BELOW {
        opts.populate();
    }
    // SAFETY: upheld by the caller.
    unsafe { opts.map(file).ok() }
}

impl Pack {
    fn open(idx_path: &Path) -> Option<Pack> {
        let pack_path = idx_path.with_extension("pack");
        let idx_file = std::fs::File::open(idx_path).ok()?;
        let pack_file = std::fs::File::open(pack_path).ok()?;
        // SAFETY: git never rewrites a pack or index in place (new ones are renamed into
        // place), so the mapped bytes do not change under us.
        let (idx, data) = unsafe { (map(&idx_file)?, map(&pack_file)?) };
        if idx.get(..8)? != b"\xfftOc\x00\x00\x00\x02" {
            return None;
        }
        if data.get(..4)? != b"PACK" || !matches!(be32(&data, 4)?, 2 | 3) {
            return None;
        }
        let count = be32(&idx, IDX_HEADER + 255 * 4)? as usize;
        // oids, crcs and 4-byte offsets must all be there.
        if idx.len() < IDX_HEADER + FANOUT + count * (20 + 4 + 4) {
            return None;
        }
        Some(Pack { idx, data, count })
    }

    fn find(&self, id: &[u8]) -> Option<u64> {
        let first = id[0] as usize;
        let lo = if first == 0 {
            0
        } else {
            be32(&self.idx, IDX_HEADER + (first - 1) * 4)? as usize
        };
        let hi = (be32(&self.idx, IDX_HEADER + first * 4)? as usize).min(self.count);
        let oids = IDX_HEADER + FANOUT;
        // Compare the first eight bytes as one number; only ties look at the rest.
        let key = u64::from_be_bytes(id[..8].try_into().ok()?);
        let at = |i: usize| -> Option<u64> {
            let p = oids + i * 20;
            Some(u64::from_be_bytes(self.idx.get(p..p + 8)?.try_into().ok()?))
        };
        let (mut lo, mut hi) = (lo, hi);
        // Object ids are uniform, so guessing the place from the key's value (interpolation,
        // as git's own lookup does) finds it in two or three probes instead of a dozen, each
        // a cache miss in an index of millions of objects. The values bounding the window
        // start as the fanout byte's range and then are the ids probed; halving takes over
        // should the guesses stop closing in.
        let (mut lo_val, mut hi_val) = (
            (first as u64) << 56,
            ((first as u64) << 56) | (u64::MAX >> 8),
        );
        let mut guesses = 0;
        while lo < hi {
            let mid = if guesses < 6 && hi - lo > 4 && lo_val < key && key < hi_val {
                guesses += 1;
                let span = (hi - lo) as u128;
                let at = (key - lo_val) as u128 * span / (hi_val - lo_val) as u128;
                lo + (at as usize).min(hi - lo - 1)
            } else {
                (lo + hi) / 2
            };
            let here = at(mid)?;
            let p = oids + mid * 20;
            let order = here
                .cmp(&key)
                .then_with(|| self.idx[p + 8..p + 20].cmp(&id[8..20]));
            match order {
                std::cmp::Ordering::Less => {
                    lo = mid + 1;
                    lo_val = here;
                }
                std::cmp::Ordering::Greater => {
                    hi = mid;
                    hi_val = here;
                }
                std::cmp::Ordering::Equal => return self.offset(mid),
            }
        }
        None
    }

    fn offset(&self, i: usize) -> Option<u64> {
        let offs = IDX_HEADER + FANOUT + self.count * 24;
        let v = be32(&self.idx, offs + i * 4)?;
        if v & 0x8000_0000 == 0 {
            return Some(v as u64);
        }
        let large = offs + self.count * 4 + (v & 0x7fff_ffff) as usize * 8;
        Some(u64::from_be_bytes(
            self.idx.get(large..large + 8)?.try_into().ok()?,
        ))
    }
}

/// The packs of an objects directory, shared by all threads.
pub struct Packs {
    packs: Vec<Pack>,
}

impl Packs {
    /// Maps every readable pack under `objects/pack` and under the object directories that
    /// `objects/info/alternates` names (a `clone --shared` or `--reference` keeps its history
    /// there); unreadable ones are left to libgit2.
    pub fn open(objects: &Path) -> Arc<Packs> {
        let mut packs = Vec::new();
        let mut dirs = vec![objects.to_path_buf()];
        let mut i = 0;
        // git follows alternates of alternates to a depth of five.
        while i < dirs.len() && dirs.len() <= 6 {
            let dir = dirs[i].clone();
            i += 1;
            if let Ok(list) = std::fs::read_dir(dir.join("pack")) {
                let mut idx: Vec<_> = list
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "idx"))
                    .collect();
                idx.sort();
                packs.extend(idx.iter().filter_map(|p| Pack::open(p)));
            }
            for alt in alternates(&dir) {
                if !dirs.contains(&alt) {
                    dirs.push(alt);
                }
            }
        }
        Arc::new(Packs { packs })
    }

    /// Unmaps the pages of the packs this process has read (they stay in the page cache and
    /// come back on the next read): a pass over thousands of scattered objects otherwise
    /// keeps every page it touched, and the kernel's neighbours of each, in the resident set.
    pub fn release_pages(&self) {
        for p in &self.packs {
            // SAFETY: the mappings are read-only views of files git never rewrites in place;
            // dropping their pages only makes the next read fault them in again.
            unsafe {
                let _ = p.data.unchecked_advise(memmap2::UncheckedAdvice::DontNeed);
            }
        }
    }

    fn locate(&self, id: &[u8]) -> Option<(usize, u64)> {
        self.packs
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.find(id).map(|off| (i, off)))
    }
}

/// The object directories `objects/info/alternates` lists, one per line (`#` comments;
/// relative paths are relative to `objects`), as gitrepository-layout(5) describes them.
fn alternates(objects: &Path) -> Vec<std::path::PathBuf> {
    let Ok(text) = std::fs::read_to_string(objects.join("info/alternates")) else {
        return Vec::new();
    };
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| objects.join(l))
        .filter(|p| p.is_dir())
        .collect()
}

/// Bytes of resolved objects kept as delta bases, per thread.
const CACHE_LIMIT: usize = 1 << 20;
/// Objects larger than this are not kept (a base that big is rare and costly to hold).
const CACHE_OBJECT_LIMIT: usize = 512 << 10;

/// An object's kind and bytes, shared between the cache and its readers.
pub type Object = (Kind, Rc<Vec<u8>>);

/// One thread's reader: its inflater and its delta-base cache.
pub struct PackReader {
    packs: Arc<Packs>,
    inflater: flate2::Decompress,
    cache: IdMap<(usize, u64), Object>,
    cached_bytes: usize,
    /// Inflated delta instructions, reused: they are read once and dropped.
    delta: Vec<u8>,
}

impl PackReader {
    /// A reader with its own inflater and delta-base cache over shared packs.
    pub fn new(packs: Arc<Packs>) -> PackReader {
        PackReader {
            packs,
            inflater: flate2::Decompress::new(false),
            cache: IdMap::default(),
            cached_bytes: 0,
            delta: Vec::new(),
        }
    }

    /// The object with this id, or `None` when the packs do not have it (or look wrong).
    pub fn read(&mut self, id: &[u8]) -> Option<Object> {
        let (pack, off) = self.packs.locate(id)?;
        self.read_at(pack, off, 0)
    }

    /// Like `read`, but an object stored whole is not kept in the delta-base cache: for
    /// reading many commits, which are rarely a delta's base, without pushing out the trees
    /// that are.
    pub fn read_once(&mut self, id: &[u8]) -> Option<Object> {
        let (pack, off) = self.packs.locate(id)?;
        let packs = Arc::clone(&self.packs);
        let data: &[u8] = &packs.packs[pack].data;
        let (typ, size, pos) = entry_header(data, off as usize)?;
        if !(1..=4).contains(&typ) {
            return self.read_at(pack, off, 0);
        }
        let body = self.inflate(data, pos, size)?;
        Some((Kind::from_type(typ)?, Rc::new(body)))
    }

    /// The first `max` bytes of an object stored whole (no delta), with its kind and whether
    /// that is all of it; `None` for a delta or an object the packs do not have. Reading a
    /// commit's header this way skips inflating its message, and nothing is cached.
    pub fn read_head(&mut self, id: &[u8], max: usize) -> Option<(Kind, Vec<u8>, bool)> {
        let (pack, off) = self.packs.locate(id)?;
        let data: &[u8] = &self.packs.packs[pack].data;
        let (typ, size, pos) = entry_header(data, off as usize)?;
        if !(1..=4).contains(&typ) {
            return None;
        }
        let kind = Kind::from_type(typ)?;
        let want = size.min(max);
        let input = deflate_body(data, pos)?;
        let mut out = vec![0u8; want];
        self.inflater.reset(false);
        let mut filled = 0;
        // The output is full after `want` bytes; a stream may need more than one call to
        // fill it, and one that ends early is corrupt.
        while filled < want {
            let before = self.inflater.total_out();
            let status = self
                .inflater
                .decompress(
                    input.get(self.inflater.total_in() as usize..)?,
                    &mut out[filled..],
                    flate2::FlushDecompress::None,
                )
                .ok()?;
            let got = (self.inflater.total_out() - before) as usize;
            filled += got;
            if got == 0 || (status == flate2::Status::StreamEnd && filled < want) {
                return None;
            }
        }
        Some((kind, out, want == size))
    }

    fn read_at(&mut self, pack: usize, offset: u64, depth: usize) -> Option<Object> {
        // A ref-delta chain through other packs could in theory loop; git caps it too.
        if depth > 10_000 {
            return None;
        }
        let packs = Arc::clone(&self.packs);
        let data: &[u8] = &packs.packs[pack].data;
        // Walk down the delta chain to a whole object or a cached base.
        let mut deltas: Vec<(u64, usize, usize)> = Vec::new();
        let mut off = offset;
        let (kind, mut cur) = loop {
            if let Some((k, b)) = self.cache.get(&(pack, off)) {
                break (*k, Rc::clone(b));
            }
            let (typ, size, mut pos) = entry_header(data, off as usize)?;
            match typ {
                1..=4 => {
                    let body = self.inflate(data, pos, size)?;
                    let kind = Kind::from_type(typ)?;
                    let body = Rc::new(body);
                    self.remember(pack, off, kind, &body);
                    break (kind, body);
                }
                6 => {
                    let mut c = *data.get(pos)?;
                    pos += 1;
                    let mut back = (c & 0x7f) as u64;
                    while c & 0x80 != 0 {
                        c = *data.get(pos)?;
                        pos += 1;
                        back = ((back + 1) << 7) | (c & 0x7f) as u64;
                    }
                    deltas.push((off, pos, size));
                    off = off.checked_sub(back)?;
                }
                7 => {
                    let base_id = data.get(pos..pos + 20)?;
                    deltas.push((off, pos + 20, size));
                    let (base_pack, base_off) = packs.locate(base_id)?;
                    if base_pack == pack {
                        off = base_off;
                    } else {
                        let (k, b) = self.read_at(base_pack, base_off, depth + 1)?;
                        break (k, b);
                    }
                }
                _ => return None,
            }
        };
        let mut delta = std::mem::take(&mut self.delta);
        while let Some((at, pos, size)) = deltas.pop() {
            self.inflate_into(data, pos, size, &mut delta)?;
            let out = Rc::new(apply_delta(&cur, &delta)?);
            self.remember(pack, at, kind, &out);
            cur = out;
        }
        self.delta = delta;
        Some((kind, cur))
    }

    fn remember(&mut self, pack: usize, off: u64, kind: Kind, body: &Rc<Vec<u8>>) {
        if body.len() > CACHE_OBJECT_LIMIT {
            return;
        }
        if self.cached_bytes + body.len() > CACHE_LIMIT {
            self.cache.clear();
            self.cached_bytes = 0;
        }
        self.cached_bytes += body.len();
        self.cache.insert((pack, off), (kind, Rc::clone(body)));
    }

    fn inflate(&mut self, data: &[u8], pos: usize, size: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.inflate_into(data, pos, size, &mut out)?;
        Some(out)
    }

    /// Inflates the zlib stream at `pos`, which must yield exactly `size` bytes, into `out`.
    fn inflate_into(
        &mut self,
        data: &[u8],
        pos: usize,
        size: usize,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        let input = deflate_body(data, pos)?;
        out.clear();
        out.reserve(size);
        self.inflater.reset(false);
        let status = self
            .inflater
            .decompress_vec(input, out, flate2::FlushDecompress::Finish)
            .ok()?;
        (status == flate2::Status::StreamEnd && out.len() == size).then_some(())
    }
}

/// The raw deflate stream of the zlib stream at `pos`, past its 2-byte header: inflating it
/// raw skips the trailing adler32, a fifth of the work, which the pack's own checksum
/// already covers. `None` when the header is not plain deflate.
fn deflate_body(data: &[u8], pos: usize) -> Option<&[u8]> {
    let (cmf, flg) = (*data.get(pos)?, *data.get(pos + 1)?);
    if cmf & 0x0f != 8 || flg & 0x20 != 0 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
        return None;
    }
    data.get(pos + 2..)
}

/// Type and inflated size of the pack entry at `off`, and where its body starts.
fn entry_header(data: &[u8], off: usize) -> Option<(u8, usize, usize)> {
    let mut pos = off;
    let mut c = *data.get(pos)?;
    pos += 1;
    let typ = (c >> 4) & 7;
    let mut size = (c & 15) as usize;
    let mut shift = 4;
    while c & 0x80 != 0 {
        c = *data.get(pos)?;
        pos += 1;
        if shift > 57 {
            return None;
        }
        size |= ((c & 0x7f) as usize) << shift;
        shift += 7;
    }
    Some((typ, size, pos))
}

fn delta_size(d: &[u8], pos: &mut usize) -> Option<usize> {
    let mut size = 0usize;
    let mut shift = 0;
    loop {
        let c = *d.get(*pos)?;
        *pos += 1;
        if shift > 57 {
            return None;
        }
        size |= ((c & 0x7f) as usize) << shift;
        shift += 7;
        if c & 0x80 == 0 {
            return Some(size);
        }
    }
}

/// Applies a git delta (copy and insert instructions) to its base.
pub fn apply_delta(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
    let mut pos = 0;
    if delta_size(delta, &mut pos)? != base.len() {
        return None;
    }
    let out_size = delta_size(delta, &mut pos)?;
    let mut out = Vec::with_capacity(out_size);
    while pos < delta.len() {
        let op = delta[pos];
        pos += 1;
        if op & 0x80 != 0 {
            let mut offset = 0usize;
            let mut size = 0usize;
            for i in 0..4 {
                if op & (1 << i) != 0 {
                    offset |= (*delta.get(pos)? as usize) << (8 * i);
                    pos += 1;
                }
            }
            for i in 0..3 {
                if op & (0x10 << i) != 0 {
                    size |= (*delta.get(pos)? as usize) << (8 * i);
                    pos += 1;
                }
            }
            if size == 0 {
                size = 0x10000;
            }
            out.extend_from_slice(base.get(offset..offset.checked_add(size)?)?);
        } else if op != 0 {
            let n = op as usize;
            out.extend_from_slice(delta.get(pos..pos + n)?);
            pos += n;
        } else {
            return None;
        }
    }
    (out.len() == out_size).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_copy_and_insert() {
        let base = b"hello, world";
        // src 12, dst 11; copy 0..5 ("hello"), insert " git!", copy 6..7? no: insert only
        let delta = [12u8, 11, 0x91, 0, 5, 6, b' ', b'g', b'i', b't', b'!', b'!'];
        assert_eq!(
            apply_delta(base, &delta).as_deref(),
            Some(&b"hello git!!"[..])
        );
        // wrong base size
        assert_eq!(apply_delta(b"x", &delta), None);
        // truncated insert
        assert_eq!(apply_delta(base, &[12, 3, 5, b'a']), None);
        // op 0 is reserved
        assert_eq!(apply_delta(base, &[12, 0, 0]), None);
    }

    #[test]
    fn headers() {
        // blob of 300 bytes: 0b1_011_1100, 300>>4 = 18
        assert_eq!(entry_header(&[0xbc, 0x12], 0), Some((3, 300, 2)));
        assert_eq!(entry_header(&[0x25], 0), Some((2, 5, 1)));
        assert_eq!(entry_header(&[0xbc], 0), None);
    }

    /// A `clone --shared` has no pack of its own: its objects are read from the packs of the
    /// object directory its alternates file names (relative or absolute, after a comment).
    #[test]
    fn packs_of_alternates_are_read() {
        use crate::git::testgit::git;
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir(&src).unwrap();
        git(&src, &["init", "-q", "-b", "main", "."]);
        std::fs::write(src.join("f"), "text\n").unwrap();
        git(&src, &["add", "f"]);
        git(&src, &["commit", "-q", "-m", "one"]);
        git(&src, &["repack", "-q", "-a", "-d"]);
        let blob = git(&src, &["rev-parse", "HEAD:f"]);
        let id = crate::git::Oid::from_hex(blob.trim()).unwrap();
        git(
            dir.path(),
            &["clone", "-q", "--bare", "--shared", "src", "clone.git"],
        );
        let objects = dir.path().join("clone.git/objects");
        assert!(
            std::fs::read_dir(objects.join("pack"))
                .unwrap()
                .next()
                .is_none()
        );
        let read = |objects: &Path| {
            PackReader::new(Packs::open(objects))
                .read(id.0.as_bytes())
                .map(|(kind, bytes)| (kind, bytes.to_vec()))
        };
        assert_eq!(read(&objects), Some((Kind::Blob, b"text\n".to_vec())));
        std::fs::write(
            objects.join("info/alternates"),
            "# made by hand\n../../src/.git/objects\n",
        )
        .unwrap();
        assert_eq!(read(&objects), Some((Kind::Blob, b"text\n".to_vec())));
        std::fs::write(objects.join("info/alternates"), "").unwrap();
        assert_eq!(read(&objects), None);
    }

    /// Every object of a pack is found by its id, and ids next to them are not: the guesses
    /// of the lookup never skip an entry.
    #[test]
    fn every_object_is_found_and_no_other() {
        use crate::git::testgit::git;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        git(d, &["init", "-q", "-b", "main", "."]);
        for i in 0..1500 {
            std::fs::write(d.join(format!("f{i}")), format!("{i}\n")).unwrap();
        }
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "many"]);
        git(d, &["repack", "-q", "-a", "-d"]);
        let packs = Packs::open(&d.join(".git/objects"));
        let ids = git(d, &["rev-list", "--objects", "--all"]);
        let mut n = 0;
        for line in ids.lines() {
            let hex = line.split(' ').next().unwrap();
            let mut id = crate::git::Oid::from_hex(hex)
                .unwrap()
                .0
                .as_bytes()
                .to_vec();
            assert!(packs.locate(&id).is_some(), "{hex} not found");
            id[19] ^= 1;
            assert!(
                packs.locate(&id).is_none(),
                "{hex} with its last bit flipped found"
            );
            id[19] ^= 1;
            id[5] ^= 0x80;
            assert!(packs.locate(&id).is_none());
            n += 1;
        }
        assert!(n > 1500);
        assert!(packs.locate(&[0u8; 20]).is_none() && packs.locate(&[0xffu8; 20]).is_none());
    }
}
