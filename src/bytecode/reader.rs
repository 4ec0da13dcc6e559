//! The one byte cursor: a borrowed slice, a position, and the absolute offset
//! of the slice's first byte so that sub-readers report whole-file offsets.
use super::ReadError;

/// A cursor over part of the input.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `data`, whose first byte is at absolute offset `base`.
    pub(crate) fn new(data: &'a [u8], base: usize) -> Self {
        Reader { data, pos: 0, base }
    }

    /// Absolute offset of the next byte.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Bytes left.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Whether no bytes are left.
    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Total length of this reader's slice.
    pub(crate) fn len(&self) -> usize {
        self.data.len()
    }

    /// Absolute offset of this reader's first byte.
    pub(crate) fn base(&self) -> usize {
        self.base
    }

    /// An error at the current offset.
    #[cold]
    pub(crate) fn err(&self, message: impl Into<String>) -> ReadError {
        ReadError::new(self.offset(), message)
    }

    /// One byte.
    pub(crate) fn u8(&mut self) -> Result<u8, ReadError> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.err("unexpected end of data")),
        }
    }

    /// An unsigned LEB128 varint of at most 64 bits. Like NVIDIA's reader,
    /// a truncated varint leaves the position after the bytes it consumed.
    pub(crate) fn varint(&mut self) -> Result<u64, ReadError> {
        let mut result: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(self.err("unexpected end of data while reading varint"));
            };
            if shift > 63 {
                return Err(self.err("varint is too long"));
            }
            self.pos += 1;
            result |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return Ok(result);
            }
        }
    }

    /// A varint that must be at most `max`; `what` names it in the error.
    pub(crate) fn count(&mut self, max: u64, what: &str) -> Result<u64, ReadError> {
        let at = self.offset();
        let v = self.varint()?;
        if v > max {
            return Err(ReadError::new(
                at,
                format!("{what} ({v}) exceeds the limit of {max}"),
            ));
        }
        Ok(v)
    }

    /// A zigzag-encoded signed varint.
    pub(crate) fn svarint(&mut self) -> Result<i64, ReadError> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// `n` raw bytes.
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        if n > self.remaining() {
            return Err(self.err(format!(
                "unexpected end of data: {n} bytes needed, {} left",
                self.remaining()
            )));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A sub-reader over the next `n` bytes, which are consumed.
    pub(crate) fn sub(&mut self, n: usize) -> Result<Reader<'a>, ReadError> {
        let base = self.offset();
        let s = self.bytes(n)?;
        Ok(Reader::new(s, base))
    }

    /// Everything left, as a sub-reader.
    pub(crate) fn rest(&mut self) -> Reader<'a> {
        let n = self.remaining();
        let base = self.offset();
        let s = &self.data[self.pos..];
        self.pos += n;
        Reader::new(s, base)
    }

    /// The raw bytes of this reader.
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Little-endian `u32`.
    pub(crate) fn u32_le(&mut self) -> Result<u32, ReadError> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Little-endian `u64`.
    pub(crate) fn u64_le(&mut self) -> Result<u64, ReadError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// Skips padding up to the next multiple of `align` of the position in
    /// this reader. Like NVIDIA's reader, fails when no bytes are left at all.
    pub(crate) fn skip_padding(&mut self, align: usize) -> Result<(), ReadError> {
        if align < 2 {
            return Ok(());
        }
        if self.is_empty() {
            return Err(self.err("unexpected end of data while skipping padding"));
        }
        let pad = (align - self.pos % align) % align;
        self.bytes(pad).map(|_| ())
    }
}
