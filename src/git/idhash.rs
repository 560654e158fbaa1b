//! A hasher for keys that are already uniformly random (object ids, pack offsets mixed in):
//! SipHash's protection against chosen keys buys nothing there and costs a tenth of a walk.

use std::hash::{BuildHasherDefault, Hasher};

/// Folds the written bytes into a u64 with a multiply-rotate; object ids are SHA-1 output,
/// so their first bytes are as good as any hash of them.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(buf));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

pub(crate) type IdBuildHasher = BuildHasherDefault<IdHasher>;
pub(crate) type IdMap<K, V> = std::collections::HashMap<K, V, IdBuildHasher>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_works_with_tuple_and_byte_keys() {
        let mut m: IdMap<(usize, u64), u8> = IdMap::default();
        for i in 0..1000u64 {
            m.insert((i as usize % 3, i * 7919), 1);
        }
        assert_eq!(m.len(), 1000);
        let mut b: IdMap<[u8; 20], u8> = IdMap::default();
        b.insert([1; 20], 1);
        assert_eq!(b.get(&[1; 20]), Some(&1));
    }
}
