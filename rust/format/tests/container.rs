//! The trace file: round trip, atomic write, and every kind of bad input.

use std::collections::BTreeMap;

use hubble_format::file::{FileError, TraceFile, TraceHeader, MAGIC};
use hubble_format::{Mode, RingWriter, TimeAnchor};

fn sample() -> TraceFile {
    let mut ring = RingWriter::new(Mode::Bits64, 16);
    ring.start(5);
    ring.entry(0x7000_0010, 6).unwrap();
    ring.entry(0x7f_0000_0020, 7).unwrap();
    ring.exit(8);
    ring.exit(9);
    let view = ring.view();
    let window = hubble_format::ring::decode(&view, Mode::Bits64).unwrap();
    let used = window.slots_used;
    let slots = ring.slots();
    let wp = (ring.write_pos_bytes() / 8) as usize;
    let mut symbols = BTreeMap::new();
    symbols.insert(
        0x7000_0010,
        "void com.example.Main.onCreate(android.os.Bundle)".to_owned(),
    );
    symbols.insert(0x7f_0000_0020, "int com.example.Util.sum(int[])".to_owned());
    TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 19_200_000,
            reference_counter: 10,
            wall_clock_ns: 1_700_000_000_000_000_000,
            ring_bytes: 128,
            write_pos: ring.write_pos_bytes(),
            pid: 4242,
            tid: 4242,
            thread_name: "main".into(),
            process_name: "com.example".into(),
            reason: "jank".into(),
            // Between the wide entry (ts 7) and the first exit: a bound that changes nothing
            // here, so every test of the container covers the anchor table too.
            anchors: vec![TimeAnchor {
                slots_after: 2,
                bound: 8,
            }],
            // And the metadata table (format version 3).
            metadata: BTreeMap::from([
                (
                    "build.fingerprint".to_owned(),
                    "google/husky/husky:14/UQ1A/1:user/release-keys".to_owned(),
                ),
                ("device.model".to_owned(), "Pixel 8 Pro".to_owned()),
            ]),
        },
        window: slots[wp - used..wp].to_vec(),
        symbols,
    }
}

#[test]
fn round_trip() {
    let file = sample();
    let bytes = file.to_bytes().unwrap();
    assert_eq!(&bytes[..8], &MAGIC);
    let back = TraceFile::parse(&bytes).unwrap();
    assert_eq!(back, file);
    let events = back.decode_events().unwrap().events;
    assert_eq!(events.len(), 5);
    assert_eq!(events.last().unwrap().counter, 9);
}

#[test]
fn window_is_8_aligned_in_the_file() {
    let bytes = sample().to_bytes().unwrap();
    let offset = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    assert_eq!(offset % 8, 0);
    assert_eq!(
        u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap()),
        0x5_0000_0003
    );
}

#[test]
fn every_truncation_is_reported_as_such() {
    let bytes = sample().to_bytes().unwrap();
    for len in 0..bytes.len() {
        match TraceFile::parse(&bytes[..len]) {
            Err(FileError::Truncated { .. }) => {}
            other => panic!("length {len}: expected Truncated, got {other:?}"),
        }
    }
}

#[test]
fn every_single_bit_flip_is_detected() {
    let bytes = sample().to_bytes().unwrap();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            let mut bad = bytes.clone();
            bad[i] ^= 1 << bit;
            assert!(
                TraceFile::parse(&bad).is_err(),
                "flip of bit {bit} in byte {i} went unnoticed"
            );
        }
    }
}

#[test]
fn specific_errors() {
    let bytes = sample().to_bytes().unwrap();
    let mut bad = bytes.clone();
    bad[0] = b'X';
    assert!(matches!(TraceFile::parse(&bad), Err(FileError::BadMagic)));
    let mut bad = bytes.clone();
    bad[8] = 9;
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::UnsupportedVersion(9))
    ));
    let mut bad = bytes.clone();
    bad[10] = 48;
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::BadMode(48))
    ));
    let mut bad = bytes.clone();
    bad[40] = 0x81; // ring size 129: not a multiple of 8
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::Invalid {
            field: "ring size",
            ..
        })
    ));
    let mut bad = bytes.clone();
    bad[48..56].copy_from_slice(&1000u64.to_le_bytes());
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::Invalid {
            field: "write position",
            ..
        })
    ));
    let mut bad = bytes.clone();
    bad[72..76].copy_from_slice(&200_000u32.to_le_bytes());
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::Invalid {
            field: "symbol count",
            ..
        })
    ));
    // Reserved bytes: rejected even with a correct checksum (found by the container fuzzer);
    // in version 1 that includes the word version 2 counts anchors in, and in versions 1 and 2
    // the byte version 3 counts metadata in.
    let v1 = older(&without_anchors(), 1);
    let v2 = older(&sample(), 2);
    for (image, offset) in [(&v2, 11usize), (&v1, 11), (&v1, 76), (&v1, 79)] {
        let mut bad = image[..image.len() - 4].to_vec();
        bad[offset] = 1;
        let crc = crc32(&bad);
        bad.extend_from_slice(&crc.to_le_bytes());
        assert!(
            matches!(TraceFile::parse(&bad), Err(FileError::Invalid { .. })),
            "{offset}"
        );
    }
    // An anchor count the window cannot hold is corruption, not a long loop.
    let mut bad = bytes.clone();
    bad[76..80].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::Invalid {
            field: "anchor count",
            ..
        })
    ));
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 1] ^= 0xff;
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::ChecksumMismatch { .. })
    ));
    let mut bad = bytes.clone();
    bad.push(0);
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::TrailingBytes(1))
    ));
}

#[test]
fn atomic_write_leaves_only_the_final_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("1-2-3-jank.hubble");
    sample().write_atomic(&path).unwrap();
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec!["1-2-3-jank.hubble".to_owned()]);
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(TraceFile::read(&path).unwrap(), sample());
}

#[test]
fn write_into_a_missing_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("x.hubble");
    assert!(matches!(
        sample().write_atomic(&path),
        Err(FileError::Io(_))
    ));
}

fn without_anchors() -> TraceFile {
    let mut f = sample();
    f.header.anchors.clear();
    f.header.metadata.clear();
    f
}

/// `file` as an older version wrote it: version 1 had neither anchors nor metadata, version 2
/// no metadata. Built by hand from the current bytes (the layouts differ only in what the
/// older versions lack), with the version and the CRC rewritten.
fn older(file: &TraceFile, version: u16) -> Vec<u8> {
    let mut file = file.clone();
    file.header.metadata.clear();
    if version == 1 {
        assert!(file.header.anchors.is_empty());
    }
    let bytes = file.to_bytes().unwrap();
    let mut old = bytes[..bytes.len() - 4].to_vec();
    old[8..10].copy_from_slice(&version.to_le_bytes());
    let crc = crc32(&old);
    old.extend_from_slice(&crc.to_le_bytes());
    old
}

#[test]
fn older_versions_still_read() {
    for (version, file) in [
        (1, without_anchors()),
        (2, {
            let mut f = sample();
            f.header.metadata.clear();
            f
        }),
    ] {
        let old = older(&file, version);
        assert_eq!(TraceFile::parse(&old).unwrap(), file, "version {version}");
        // Written back, it is a version 3 file: the same bytes but the version and the checksum.
        let again = TraceFile::parse(&old).unwrap().to_bytes().unwrap();
        assert_eq!(u16::from_le_bytes([again[8], again[9]]), 3);
        assert_eq!(again[10..again.len() - 4], old[10..old.len() - 4]);
        assert_eq!(TraceFile::parse(&again).unwrap(), file);
    }
    let bytes = sample().to_bytes().unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 3);
    assert_eq!(u32::from_le_bytes(bytes[76..80].try_into().unwrap()), 1);
    assert_eq!(bytes[11], 2, "metadata count");
    let mut v4 = bytes.clone();
    v4[8] = 4;
    let err = TraceFile::parse(&v4).unwrap_err();
    assert!(matches!(err, FileError::UnsupportedVersion(4)));
    assert_eq!(
        err.to_string(),
        "unsupported format version 4 (this tool reads versions 1 to 3)"
    );
}

/// The metadata table's bytes, located independently of the parser: the last thing before the
/// CRC, `(u16 len, key, u16 len, value)` per entry in key order.
#[test]
fn metadata_is_stored_after_the_anchors_in_key_order() {
    let file = sample();
    let bytes = file.to_bytes().unwrap();
    let mut expected = Vec::new();
    for (k, v) in [
        (
            "build.fingerprint",
            "google/husky/husky:14/UQ1A/1:user/release-keys",
        ),
        ("device.model", "Pixel 8 Pro"),
    ] {
        for s in [k, v] {
            expected.extend_from_slice(&(s.len() as u16).to_le_bytes());
            expected.extend_from_slice(s.as_bytes());
        }
    }
    let end = bytes.len() - 4;
    assert_eq!(&bytes[end - expected.len()..end], &expected[..]);
}

#[test]
fn metadata_that_no_writer_produces_is_refused_both_ways() {
    let cases: [(&str, &str, &str); 4] = [
        ("empty key", "", "x"),
        ("upper case", "Device.Model", "x"),
        ("space", "device model", "x"),
        ("long value", "device.model", &"v".repeat(257)),
    ];
    for (what, key, value) in cases {
        let mut file = sample();
        file.header
            .metadata
            .insert(key.to_owned(), value.to_owned());
        let err = file.to_bytes().unwrap_err();
        assert!(
            matches!(err, FileError::Invalid { .. }),
            "{what}: writer gave {err}"
        );
        // Built by hand, with a correct CRC, the reader refuses it too.
        let bytes = sample().to_bytes().unwrap();
        let mut bad = bytes[..bytes.len() - 4].to_vec();
        bad[11] += 1;
        for s in [key, value] {
            bad.extend_from_slice(&(s.len() as u16).to_le_bytes());
            bad.extend_from_slice(s.as_bytes());
        }
        let crc = crc32(&bad);
        bad.extend_from_slice(&crc.to_le_bytes());
        let err = TraceFile::parse(&bad).unwrap_err();
        assert!(
            matches!(err, FileError::Invalid { .. }),
            "{what}: reader gave {err}"
        );
    }
    // 33 entries: too many for a writer; a count byte over 32 for a reader.
    let mut file = sample();
    for i in 0..31 {
        file.header.metadata.insert(format!("k{i:02}"), "v".into());
    }
    assert!(matches!(file.to_bytes(), Err(FileError::Invalid { .. })));
    let bytes = sample().to_bytes().unwrap();
    let mut bad = bytes[..bytes.len() - 4].to_vec();
    bad[11] = 33;
    let crc = crc32(&bad);
    bad.extend_from_slice(&crc.to_le_bytes());
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::Invalid {
            field: "metadata count",
            ..
        })
    ));
    // Keys out of order (the tail's entries swapped) are corruption.
    let mut bad = bytes[..bytes.len() - 4].to_vec();
    let mut entries = Vec::new();
    for (k, v) in [
        ("device.model", "Pixel 8 Pro"),
        (
            "build.fingerprint",
            "google/husky/husky:14/UQ1A/1:user/release-keys",
        ),
    ] {
        for s in [k, v] {
            entries.extend_from_slice(&(s.len() as u16).to_le_bytes());
            entries.extend_from_slice(s.as_bytes());
        }
    }
    let at = bad.len() - entries.len();
    bad[at..].copy_from_slice(&entries);
    let crc = crc32(&bad);
    bad.extend_from_slice(&crc.to_le_bytes());
    assert!(matches!(
        TraceFile::parse(&bad),
        Err(FileError::Invalid {
            field: "metadata",
            ..
        })
    ));
}

#[test]
fn anchors_that_no_runtime_writes_are_refused_both_ways() {
    let window = sample().window.len() as u64;
    let cases: [(&str, Vec<TimeAnchor>); 4] = [
        (
            "past the window",
            vec![TimeAnchor {
                slots_after: window + 1,
                bound: 8,
            }],
        ),
        (
            "position not increasing",
            vec![
                TimeAnchor {
                    slots_after: 3,
                    bound: 8,
                },
                TimeAnchor {
                    slots_after: 3,
                    bound: 7,
                },
            ],
        ),
        (
            "older bound later",
            vec![
                TimeAnchor {
                    slots_after: 1,
                    bound: 8,
                },
                TimeAnchor {
                    slots_after: 3,
                    bound: 9,
                },
            ],
        ),
        (
            "more than one a slot",
            (0..=window + 1)
                .map(|i| TimeAnchor {
                    slots_after: i,
                    bound: 100 - i,
                })
                .collect(),
        ),
    ];
    for (what, anchors) in cases {
        let mut file = sample();
        file.header.anchors = anchors.clone();
        assert!(
            matches!(file.to_bytes(), Err(FileError::Invalid { .. })),
            "{what}: written"
        );
        // The same anchors in a file whose checksum is right: the reader refuses them too
        // (built without metadata, so that the anchors are the table before the CRC).
        let mut good = sample();
        good.header.metadata.clear();
        good.header.anchors = vec![
            TimeAnchor {
                slots_after: 0,
                bound: 0,
            };
            anchors.len()
        ];
        for (i, a) in good.header.anchors.iter_mut().enumerate() {
            a.slots_after = i as u64;
        }
        if anchors.len() as u64 > window + 1 {
            continue; // the writer cannot even produce the count; covered by specific_errors
        }
        let bytes = good.to_bytes().unwrap();
        let n = bytes.len();
        let mut bad = bytes[..n - 4 - 16 * anchors.len()].to_vec();
        for a in &anchors {
            bad.extend_from_slice(&a.slots_after.to_le_bytes());
            bad.extend_from_slice(&a.bound.to_le_bytes());
        }
        let crc = crc32(&bad);
        bad.extend_from_slice(&crc.to_le_bytes());
        match TraceFile::parse(&bad) {
            Err(FileError::Invalid { field, .. }) => assert_eq!(field, "anchor", "{what}"),
            other => panic!("{what}: read as {other:?}"),
        }
    }
}

#[test]
fn an_anchor_at_every_slot_is_the_most_a_file_holds() {
    // One anchor per position, 0 (the window's end) to the window's length (its start): valid,
    // and the most there can be; a header that counts one more is corrupt, said before the
    // anchors are read.
    let mut file = sample();
    let n = file.window.len() as u64;
    file.header.anchors = (0..=n)
        .map(|i| TimeAnchor {
            slots_after: i,
            bound: 100 - i,
        })
        .collect();
    let bytes = file.to_bytes().unwrap();
    assert_eq!(TraceFile::parse(&bytes).unwrap(), file);
    let mut bad = bytes[..bytes.len() - 4].to_vec();
    bad[76..80].copy_from_slice(&(n as u32 + 2).to_le_bytes());
    bad.extend_from_slice(&0u64.to_le_bytes());
    bad.extend_from_slice(&0u64.to_le_bytes());
    let crc = crc32(&bad);
    bad.extend_from_slice(&crc.to_le_bytes());
    match TraceFile::parse(&bad) {
        Err(FileError::Invalid { field, .. }) => assert_eq!(field, "anchor count"),
        other => panic!("{n} + 2 anchors read as {other:?}"),
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn checksum_is_crc32_ieee() {
    let bytes = sample().to_bytes().unwrap();
    let n = bytes.len();
    assert_eq!(
        u32::from_le_bytes(bytes[n - 4..].try_into().unwrap()),
        crc32(&bytes[..n - 4])
    );
}

#[test]
fn empty_window_decodes_to_nothing() {
    // Found by the container fuzzer: an empty window used to divide by zero.
    let mut file = without_anchors();
    file.window.clear();
    let back = TraceFile::parse(&file.to_bytes().unwrap()).unwrap();
    assert!(back.decode_events().unwrap().events.is_empty());
    assert_eq!(
        hubble_format::EventIter::new(
            &hubble_format::RingView::linear(&back.window),
            Mode::Bits64,
            1
        )
        .unwrap()
        .count(),
        0
    );
}

/// The window-first path (window written and checksummed apart, header and symbols around it)
/// yields exactly `to_bytes`, for every length of the header strings (the padding varies).
#[test]
fn window_first_encoding_is_byte_identical() {
    use hubble_format::file::{encode_around, window_bytes, window_offset, WindowCrc};
    for len in 0..20 {
        let mut file = sample();
        file.header.thread_name = "t".repeat(len);
        file.header.reason = "r".repeat(len / 3);
        let reference = file.to_bytes().unwrap();
        let bytes = window_bytes(&file.window);
        let offset = window_offset(&file.header).unwrap();
        let (head, tail) = encode_around(
            &file.header,
            file.window.len(),
            &WindowCrc::of(&bytes),
            file.symbols.len(),
            file.symbols.iter().map(|(p, n)| (*p, n.as_str())),
        )
        .unwrap();
        assert_eq!(head.len(), offset);
        let mut assembled = vec![0u8; reference.len()];
        assembled[offset..offset + bytes.len()].copy_from_slice(&bytes);
        assembled[..offset].copy_from_slice(&head);
        assembled[offset + bytes.len()..].copy_from_slice(&tail);
        assert_eq!(assembled, reference);
        assert_eq!(
            crc32(&reference[..reference.len() - 4]).to_le_bytes()[..],
            reference[reference.len() - 4..]
        );
    }
}

#[test]
fn window_first_encoding_refuses_inconsistent_input() {
    use hubble_format::file::{encode_around, window_bytes, WindowCrc};
    let file = sample();
    let bytes = window_bytes(&file.window);
    let crc = WindowCrc::of(&bytes);
    let symbols = || file.symbols.iter().map(|(p, n)| (*p, n.as_str()));
    // A checksum of other bytes than the window's.
    let short = WindowCrc::of(&bytes[8..]);
    assert!(encode_around(&file.header, file.window.len(), &short, 2, symbols()).is_err());
    // Fewer symbols than announced.
    assert!(encode_around(&file.header, file.window.len(), &crc, 3, symbols()).is_err());
    // Pointers out of order.
    let reversed: Vec<_> = symbols().rev().collect();
    assert!(encode_around(&file.header, file.window.len(), &crc, 2, reversed).is_err());
    assert!(encode_around(&file.header, file.window.len(), &crc, 2, symbols()).is_ok());
}

/// Pieces may arrive in any order and from any thread; an unfinished file never appears
/// under its name, and dropping it removes the temporary file.
#[test]
fn atomic_file_in_pieces() {
    use hubble_format::file::AtomicFile;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.hubble");
    let names = || {
        let mut v: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    let f = AtomicFile::create(&path).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| f.write_at(4, b"world").unwrap());
    });
    f.write_at(0, b"hey ").unwrap();
    assert_eq!(names(), vec![".x.hubble.tmp".to_owned()]);
    f.commit().unwrap();
    assert_eq!(names(), vec!["x.hubble".to_owned()]);
    assert_eq!(std::fs::read(&path).unwrap(), b"hey world");
    let g = AtomicFile::create(&dir.path().join("y.hubble")).unwrap();
    g.write_at(0, b"half").unwrap();
    drop(g);
    assert_eq!(names(), vec!["x.hubble".to_owned()]);
}

/// A file larger than the longest header, so `read` takes its window-straight-into-slots path.
fn large() -> TraceFile {
    let mut ring = RingWriter::new(Mode::Bits64, 4096);
    let mut ts = 100;
    for i in 0..3000u64 {
        let method = if i % 3 == 0 {
            0x7f_0000_0000 + i * 16
        } else {
            0x7000_0000 + i * 8
        };
        ring.entry(method, ts).unwrap();
        ring.exit(ts + 1);
        ts += 2;
    }
    let mut file = sample();
    file.header.ring_bytes = 4096 * 8;
    file.header.write_pos = ring.write_pos_bytes();
    file.header.reference_counter = u64::from(ts);
    file.header.thread_name = "t".repeat(300);
    let (older, newer) = ring.view().pieces();
    file.window = [older, newer].concat();
    file
}

/// `read` (header, then the window straight into its slots, then the rest) and `parse` (one
/// buffer) agree on every file: good ones, every cut-off length, and corrupt bytes anywhere.
#[test]
fn read_and_parse_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.hubble");
    for file in [sample(), large()] {
        let bytes = file.to_bytes().unwrap();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(TraceFile::read(&path).unwrap(), file);
        let n = bytes.len();
        let lengths = (0..n.min(200)).chain((200..n).step_by(97)).chain([n - 1]);
        for len in lengths {
            std::fs::write(&path, &bytes[..len]).unwrap();
            let (read, parsed) = (TraceFile::read(&path), TraceFile::parse(&bytes[..len]));
            assert!(matches!(read, Err(FileError::Truncated { .. })), "{len}");
            assert_eq!(format!("{read:?}"), format!("{parsed:?}"), "length {len}");
        }
        for i in (0..n).step_by(13).chain([n - 1]) {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            let (read, parsed) = (TraceFile::read(&path), TraceFile::parse(&bad));
            assert!(read.is_err(), "flip at {i}");
            assert_eq!(format!("{read:?}"), format!("{parsed:?}"), "flip at {i}");
        }
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0; 3]);
        std::fs::write(&path, &longer).unwrap();
        assert!(matches!(
            TraceFile::read(&path),
            Err(FileError::TrailingBytes(3))
        ));
    }
    assert!(matches!(
        TraceFile::read(&dir.path().join("missing")),
        Err(FileError::Io(_))
    ));
}

/// Every limit is inclusive: three strings of `MAX_STRING` bytes, `MAX_METADATA` entries and a
/// value of `MAX_METADATA_VALUE` bytes are written, read back by `parse` and by `read` (whose
/// first read is the longest header there can be), one more is refused.
#[test]
fn limits_are_inclusive() {
    use hubble_format::file::{
        window_offset, MAX_HEADER, MAX_METADATA, MAX_METADATA_VALUE, MAX_STRING,
    };
    let mut file = large();
    file.header.thread_name = "t".repeat(MAX_STRING);
    file.header.process_name = "p".repeat(MAX_STRING);
    file.header.reason = "r".repeat(MAX_STRING);
    let keep = file.header.metadata.len();
    for i in keep..MAX_METADATA {
        file.header
            .metadata
            .insert(format!("k{i:02}"), "v".repeat(MAX_METADATA_VALUE));
    }
    assert_eq!(window_offset(&file.header).unwrap(), MAX_HEADER);
    let bytes = file.to_bytes().unwrap();
    assert_eq!(TraceFile::parse(&bytes).unwrap(), file);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.hubble");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(TraceFile::read(&path).unwrap(), file);

    let mut long = file.clone();
    long.header.reason.push('r');
    assert!(matches!(
        window_offset(&long.header),
        Err(FileError::Invalid { .. })
    ));
    assert!(matches!(long.to_bytes(), Err(FileError::Invalid { .. })));
    let mut many = file.clone();
    many.header.metadata.insert("z".into(), "v".into());
    assert!(matches!(many.to_bytes(), Err(FileError::Invalid { .. })));
    let mut wide = file;
    wide.header
        .metadata
        .insert("k00".into(), "v".repeat(MAX_METADATA_VALUE + 1));
    assert!(matches!(wide.to_bytes(), Err(FileError::Invalid { .. })));
}

/// A window longer than the ring it came from is refused by the window-first encoder too, and
/// the window checksum's `Debug` shows what it covers.
#[test]
fn window_first_encoding_refuses_a_window_longer_than_the_ring() {
    use hubble_format::file::{encode_around, window_bytes, WindowCrc};
    let file = sample();
    // Four times the ring's 16 slots (a count whose eighth is whole slots too).
    let slots = 4 * (file.header.ring_bytes / 8) as usize;
    let window = vec![0u64; slots];
    let crc = WindowCrc::of(&window_bytes(&window));
    let symbols = file.symbols.iter().map(|(p, n)| (*p, n.as_str()));
    let err = encode_around(&file.header, slots, &crc, 2, symbols).unwrap_err();
    assert!(err.to_string().contains("window size"), "{err}");
    let shown = format!("{:?}", WindowCrc::of(b"abcdefgh"));
    assert!(
        shown.contains("WindowCrc") && shown.contains("len: 8"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("crc: {}", crc32fast::hash(b"abcdefgh"))),
        "{shown}"
    );
}

/// The header's checks at their edges: each value on its limit passes the check (the parse
/// goes on and fails later, at the checksum or for want of bytes), one past it is refused by
/// name.
#[test]
fn header_checks_at_their_edges() {
    use hubble_format::file::{MAX_EXTRA_SYMBOLS, MAX_RING_BYTES};
    let bytes = sample().to_bytes().unwrap();
    let with = |at: usize, value: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + value.len()].copy_from_slice(value);
        TraceFile::parse(&b)
    };
    let field = |r: Result<TraceFile, FileError>| match r {
        Err(FileError::Invalid { field, .. }) => field,
        other => panic!("expected an invalid field, got {other:?}"),
    };
    let checksum = |r: Result<TraceFile, FileError>| {
        assert!(
            matches!(r, Err(FileError::ChecksumMismatch { .. })),
            "{r:?}"
        )
    };
    // The magic alone: the header is what is missing.
    assert!(matches!(
        TraceFile::parse(&MAGIC),
        Err(FileError::Truncated { what: "the header" })
    ));
    assert!(matches!(
        TraceFile::parse(&MAGIC[..7]),
        Err(FileError::Truncated { what: "the magic" })
    ));
    // Ring size (bytes 40..48) up to MAX_RING_BYTES.
    checksum(with(40, &MAX_RING_BYTES.to_le_bytes()));
    assert_eq!(
        field(with(40, &(MAX_RING_BYTES + 8).to_le_bytes())),
        "ring size"
    );
    // Write position (48..56) up to the ring's size (128).
    checksum(with(48, &128u64.to_le_bytes()));
    assert_eq!(field(with(48, &136u64.to_le_bytes())), "write position");
    // Window size (56..64): whole slots.
    assert_eq!(field(with(56, &12u64.to_le_bytes())), "window size");
    // Symbol count (72..76): up to the window's slots + MAX_EXTRA_SYMBOLS; at the bound the
    // count passes and the symbol table read goes wrong instead.
    let slots = sample().window.len();
    let bound = (slots + MAX_EXTRA_SYMBOLS) as u32;
    let at_bound = with(72, &bound.to_le_bytes());
    assert!(
        !matches!(
            at_bound,
            Err(FileError::Invalid {
                field: "symbol count",
                ..
            })
        ),
        "{at_bound:?}"
    );
    assert!(at_bound.is_err());
    assert_eq!(field(with(72, &(bound + 1).to_le_bytes())), "symbol count");
}

/// A bare file name (its parent is the empty path) is written in the current directory, whose
/// entry is the one made durable. The only test here that changes the working directory; every
/// other one uses absolute paths.
#[test]
fn a_bare_file_name_is_written_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_current_dir(dir.path()).unwrap();
    sample()
        .write_atomic(std::path::Path::new("bare.hubble"))
        .unwrap();
    let back = TraceFile::read(&dir.path().join("bare.hubble")).unwrap();
    assert_eq!(back, sample());
}

/// `counter_to_wall_ns` by hand: the reference pair, a tick on either side at 19.2 MHz (52.083 ns,
/// cut toward the reference), a minute later, and a 0 Hz header read as 1 Hz.
#[test]
fn counter_to_wall_ns_by_hand() {
    let mut file = sample();
    file.header.timer_hz = 19_200_000;
    file.header.reference_counter = 1_000_000;
    file.header.wall_clock_ns = 1_700_000_000_000_000_000;
    let wall = 1_700_000_000_000_000_000i128;
    assert_eq!(file.counter_to_wall_ns(1_000_000), wall);
    assert_eq!(file.counter_to_wall_ns(999_999), wall - 52);
    assert_eq!(file.counter_to_wall_ns(1_000_001), wall + 52);
    assert_eq!(file.counter_to_wall_ns(1_000_003), wall + 156);
    assert_eq!(file.counter_to_wall_ns(0), wall - 52_083_333);
    assert_eq!(
        file.counter_to_wall_ns(1_000_000 + 60 * 19_200_000),
        wall + 60_000_000_000
    );
    file.header.timer_hz = 0;
    assert_eq!(file.counter_to_wall_ns(1_000_002), wall + 2_000_000_000);
}
