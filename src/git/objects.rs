//! Raw object reads: the mapped packs first, libgit2 for the rest; blobs, and what a missing
//! or mistyped object means.

use std::rc::Rc;
use std::sync::Arc;

use super::pack::{Kind, PackReader};
use super::{Oid, Repo, git_err};
use crate::error::{Error, Result};

impl Repo {
    /// An object from the mapped packs; `None` when they do not have it.
    pub(super) fn read_packed(&self, id: Oid) -> Option<(Kind, Rc<Vec<u8>>)> {
        self.with_reader(|r| r.read(id.0.as_bytes()))
    }

    /// An object from the mapped packs, not kept in the delta-base cache unless it is a delta
    /// (see `PackReader::read_once`); `None` when the packs do not have it.
    pub(super) fn read_packed_once(&self, id: Oid) -> Option<(Kind, Rc<Vec<u8>>)> {
        self.with_reader(|r| r.read_once(id.0.as_bytes()))
    }

    /// Lets go of the pack pages read so far (`Packs::release_pages`).
    pub fn release_pack_pages(&self) {
        self.packs().release_pages();
    }

    /// This handle's pack reader, made on first use.
    fn with_reader<T>(&self, f: impl FnOnce(&mut PackReader) -> T) -> T {
        let mut reader = self.reader.borrow_mut();
        f(reader.get_or_insert_with(|| PackReader::new(Arc::clone(self.packs()))))
    }

    /// The first `max` bytes of an object stored whole in the mapped packs, its kind, and
    /// whether that is all of it.
    pub(super) fn read_packed_head(&self, id: Oid, max: usize) -> Option<(Kind, Vec<u8>, bool)> {
        self.with_reader(|r| r.read_head(id.0.as_bytes(), max))
    }

    /// An object's kind and bytes: from the mapped packs when they have it, else libgit2.
    pub(super) fn read_raw(&self, id: Oid) -> Result<Option<(Kind, Rc<Vec<u8>>)>> {
        if let Some(found) = self.read_packed(id) {
            return Ok(Some(found));
        }
        let odb = self
            .inner
            .odb()
            .map_err(|e| git_err("cannot open the object database", e))?;
        let obj = match odb.read(id.0) {
            Ok(o) => o,
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => {
                return Err(git_err(
                    format_args!("cannot read object {}", id.short()),
                    e,
                ));
            }
        };
        let kind = match obj.kind() {
            git2::ObjectType::Commit => Kind::Commit,
            git2::ObjectType::Tree => Kind::Tree,
            git2::ObjectType::Blob => Kind::Blob,
            _ => Kind::Tag,
        };
        Ok(Some((kind, Rc::new(obj.data().to_vec()))))
    }

    /// A blob's size without reading its content (a delta's header says it); `None` when the
    /// repository does not have it.
    pub fn blob_size(&self, id: Oid) -> Result<Option<usize>> {
        let odb = self
            .inner
            .odb()
            .map_err(|e| git_err("cannot open the object database", e))?;
        match odb.read_header(id.0) {
            Ok((size, _)) => Ok(Some(size)),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err(
                format_args!("cannot read object {}", id.short()),
                e,
            )),
        }
    }

    /// Reads a blob's content.
    pub fn read_blob(&self, id: Oid) -> Result<Rc<Vec<u8>>> {
        match self.read_raw(id)? {
            Some((Kind::Blob, data)) => Ok(data),
            Some(_) => Err(Error::env(format!("object {} is not a blob", id.short()))),
            None => {
                let e = Error::missing(format!(
                    "blob {} is missing from the repository",
                    id.short()
                ));
                Err(match self.is_partial_clone() {
                    true => e.hint(
                        "this is a partial clone: git fetches such blobs when it needs them, git-sage reads only what is here; fetch the history's blobs first (`git backfill`, git 2.49 and later, or a clone without --filter)",
                    ),
                    false => e,
                })
            }
        }
    }

    /// Whether the repository is a partial clone (`git clone --filter`), whose missing objects
    /// a promisor remote holds.
    pub fn is_partial_clone(&self) -> bool {
        self.inner.config().is_ok_and(|c| {
            c.get_string("extensions.partialclone").is_ok()
                || c.entries(Some(r"remote\..*\.promisor"))
                    .is_ok_and(|mut it| {
                        let mut found = false;
                        while let Some(Ok(e)) = it.next() {
                            found |= e
                                .value()
                                .is_ok_and(|v| crate::git::parse_bool(v) == Some(true));
                        }
                        found
                    })
        })
    }
}
