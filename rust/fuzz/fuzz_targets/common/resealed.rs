//! How the file fuzz targets reach past the checksum, shared by `container` and `threads`.

/// Runs `check` on `data` as it is and again with its last four bytes replaced by the CRC of
/// the rest: a mutation anywhere else would otherwise stop at the checksum, before the
/// structure checks behind it.
pub fn as_is_and_resealed(data: &[u8], check: impl Fn(&[u8])) {
    check(data);
    if data.len() >= 4 {
        let body = &data[..data.len() - 4];
        let mut fixed = body.to_vec();
        fixed.extend_from_slice(&crc32fast::hash(body).to_le_bytes());
        check(&fixed);
    }
}
