use std::io::Write;

use proptest::prelude::*;

use super::*;

fn file(path: &str, text: &str) -> ArchiveFile {
    ArchiveFile {
        path: path.into(),
        bytes: text.as_bytes().to_vec(),
        executable: false,
    }
}

/// A tar entry whose name is written raw into the header (the `tar` crate's own setters
/// refuse `..` and absolute paths, as they should).
fn raw_tar(entries: &[(&[u8], tar::EntryType, &[u8], &str)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, kind, data, link) in entries {
        let mut header = tar::Header::new_gnu();
        header.as_old_mut().name[..name.len()].copy_from_slice(name);
        header.set_entry_type(*kind);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        if !link.is_empty() {
            header.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        header.set_cksum();
        builder.append(&header, *data).unwrap();
    }
    builder.into_inner().unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn what_build_writes_inspects_clean_and_is_byte_identical() {
    let files = vec![
        file("scripts/run.sh", "echo hi\n"),
        file("SKILL.md", "---\nname: a\n---\n"),
        file("references/b.md", "b"),
    ];
    let one = write_tar_gz(&files).unwrap();
    let mut reversed = files.clone();
    reversed.reverse();
    assert_eq!(one, write_tar_gz(&reversed).unwrap());
    let seen = inspect(&one, &Limits::default());
    assert_eq!(seen.format, Some(Format::TarGz));
    assert!(seen.root_skill_md && seen.unsafe_paths.is_empty() && seen.error.is_none());
    assert_eq!(seen.entries, 3);
    assert_eq!(seen.scripts, ["scripts/run.sh"]);
    assert_eq!(seen.uncompressed_bytes, 8 + 16 + 1);
}

#[test]
fn build_refuses_paths_that_are_not_plain() {
    for bad in ["../x", "/etc/x", "a//b", "a\\b", "./a"] {
        assert!(write_tar_gz(&[file(bad, "x")]).is_err(), "{bad}");
    }
}

#[test]
fn links_devices_and_escaping_paths_are_refused() {
    let tar = raw_tar(&[
        (b"SKILL.md", tar::EntryType::Regular, b"x", ""),
        (b"../../etc/cron.d/x", tar::EntryType::Regular, b"x", ""),
        (b"/etc/passwd", tar::EntryType::Regular, b"x", ""),
        (b"link", tar::EntryType::Symlink, b"", "/etc/shadow"),
        (b"hard", tar::EntryType::Link, b"", "SKILL.md"),
        (b"dev", tar::EntryType::Char, b"", ""),
        (b"a\\..\\b", tar::EntryType::Regular, b"x", ""),
    ]);
    let seen = inspect(&gzip(&tar), &Limits::default());
    let reasons: Vec<_> = seen.unsafe_paths.iter().map(|u| u.reason).collect();
    assert_eq!(
        reasons,
        [
            Unsafe::Traversal,
            Unsafe::AbsolutePath,
            Unsafe::Symlink,
            Unsafe::HardLink,
            Unsafe::Device,
            Unsafe::Traversal
        ]
    );
    assert_eq!(seen.files.len(), 1, "only SKILL.md is kept");
    assert_eq!(seen.unsafe_paths[0].path, "../../etc/cron.d/x");
}

#[test]
fn zip_slip_and_zip_symlinks_are_refused() {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("SKILL.md", options).unwrap();
    zip.write_all(b"---\nname: z\n---\n").unwrap();
    zip.start_file("../../evil.sh", options).unwrap();
    zip.write_all(b"x").unwrap();
    zip.add_symlink("creds", "/home/u/.aws/credentials", options)
        .unwrap();
    let bytes = zip.finish().unwrap().into_inner();
    let seen = inspect(&bytes, &Limits::default());
    assert_eq!(seen.format, Some(Format::Zip));
    let reasons: Vec<_> = seen.unsafe_paths.iter().map(|u| u.reason).collect();
    assert_eq!(reasons, [Unsafe::Traversal, Unsafe::Symlink]);
    assert!(seen.root_skill_md);
}

#[test]
fn a_gzip_bomb_stops_at_the_ratio_limit() {
    let zeros = vec![0u8; 40 * 1024 * 1024];
    let tar = raw_tar(&[(b"SKILL.md", tar::EntryType::Regular, &zeros, "")]);
    let bomb = gzip(&tar);
    let seen = inspect(&bomb, &Limits::default());
    let hit = seen.limit.expect("a limit");
    assert_eq!(hit.limit, "ratio", "{}", hit.detail);
    assert!(seen.uncompressed_bytes <= Limits::default().max_entry_bytes + 1);
}

#[test]
fn entry_count_and_sizes_are_bounded() {
    let limits = Limits {
        max_entries: 3,
        max_entry_bytes: 10,
        max_total_bytes: 15,
        max_ratio: 100,
    };
    let many: Vec<_> = (0..5).map(|i| file(&format!("f{i}"), "x")).collect();
    let seen = inspect(&write_tar_gz(&many).unwrap(), &limits);
    assert_eq!(seen.limit.unwrap().limit, "entries");
    let big = inspect(
        &write_tar_gz(&[file("a", "0123456789ab")]).unwrap(),
        &limits,
    );
    assert_eq!(big.limit.unwrap().limit, "entry-bytes");
    let total = inspect(
        &write_tar_gz(&[file("a", "01234567"), file("b", "01234567")]).unwrap(),
        &limits,
    );
    assert_eq!(total.limit.unwrap().limit, "total-bytes");
}

#[test]
fn a_single_wrapping_folder_is_the_root() {
    let bytes = write_tar_gz(&[file("pdf/SKILL.md", "x"), file("pdf/scripts/a.py", "y")]).unwrap();
    let seen = inspect(&bytes, &Limits::default());
    assert!(seen.root_skill_md);
    assert_eq!(seen.wrapped_in.as_deref(), Some("pdf"));
    assert_eq!(seen.scripts, ["scripts/a.py"]);
    let none = inspect(
        &write_tar_gz(&[file("README.md", "x")]).unwrap(),
        &Limits::default(),
    );
    assert!(!none.root_skill_md);
    let junk = inspect(b"<html>not found</html>", &Limits::default());
    assert!(junk.error.is_some() && junk.format.is_none());
}

proptest! {
    /// Whatever plain files build archives, inspection gives back exactly those files, in
    /// path order, and refuses nothing.
    #[test]
    fn built_archives_round_trip(
        names in proptest::collection::btree_set("[a-z]{1,8}(/[a-z0-9_.-]{1,8}){0,2}", 1..8),
        body in proptest::collection::vec(any::<u8>(), 0..300),
    ) {
        let names: Vec<String> = names.into_iter()
            .filter(|n| n.split('/').all(|p| p != "." && p != ".."))
            .collect();
        // a name that is also a folder of another cannot be both in one tree
        let names: Vec<String> = names.iter()
            .filter(|n| !names.iter().any(|m| m.starts_with(&format!("{n}/"))))
            .cloned().collect();
        prop_assume!(!names.is_empty());
        let files: Vec<ArchiveFile> = names.iter().map(|n| ArchiveFile {
            path: n.clone(), bytes: body.clone(), executable: n.len() % 2 == 0,
        }).collect();
        let bytes = write_tar_gz(&files).unwrap();
        prop_assert_eq!(&bytes, &write_tar_gz(&files).unwrap());
        let seen = inspect(&bytes, &Limits::default());
        prop_assert!(seen.unsafe_paths.is_empty() && seen.limit.is_none() && seen.error.is_none());
        let mut expected = files.clone();
        expected.sort_by(|a, b| a.path.cmp(&b.path));
        prop_assert_eq!(seen.files, expected);
    }
}

/// A path a client could extract under a folder without leaving it: relative, only normal
/// components, no Windows separator or drive.
fn stays_inside(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && path.as_bytes().get(1) != Some(&b':')
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

/// An entry name built from parts an attacker would combine.
fn hostile_name() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        Just("..".to_string()),
        Just(".".to_string()),
        Just(String::new()),
        Just("C:".to_string()),
        Just("..\\x".to_string()),
        Just("a\\b".to_string()),
        "[a-z]{1,6}",
        Just("SKILL.md".to_string()),
    ];
    (any::<bool>(), proptest::collection::vec(part, 1..5))
        .prop_map(|(root, parts)| format!("{}{}", if root { "/" } else { "" }, parts.join("/")))
        .prop_filter("fits a tar header", |n| !n.is_empty() && n.len() < 100)
}

#[test]
fn a_drive_inside_a_wrapping_folder_is_refused() {
    let tar = raw_tar(&[
        (b"pdf/SKILL.md", tar::EntryType::Regular, b"x", ""),
        (
            b"pdf/C:/Windows/evil.dll",
            tar::EntryType::Regular,
            b"x",
            "",
        ),
        (b"./D:/x", tar::EntryType::Regular, b"x", ""),
    ]);
    let seen = inspect(&gzip(&tar), &Limits::default());
    assert_eq!(seen.wrapped_in.as_deref(), Some("pdf"));
    let refused: Vec<_> = seen
        .unsafe_paths
        .iter()
        .map(|u| (u.path.as_str(), u.reason))
        .collect();
    assert_eq!(
        refused,
        [
            ("pdf/C:/Windows/evil.dll", Unsafe::AbsolutePath),
            ("./D:/x", Unsafe::AbsolutePath)
        ]
    );
    let kept: Vec<_> = seen.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(kept, ["SKILL.md"]);
}

proptest! {
    /// Whatever names a tar or a zip carries, every file inspection hands back (the only
    /// ones ever staged on disk) has a path that stays inside the folder it is staged in, and
    /// every entry with a `..` component or an absolute path is reported unsafe.
    #[test]
    fn nothing_inspection_keeps_can_escape(names in proptest::collection::btree_set(hostile_name(), 1..6)) {
        let entries: Vec<(&[u8], tar::EntryType, &[u8], &str)> = names
            .iter()
            .map(|n| (n.as_bytes(), tar::EntryType::Regular, &b"x"[..], ""))
            .collect();
        let tar = gzip(&raw_tar(&entries));
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for n in &names {
            zip.start_file(n.as_str(), zip::write::SimpleFileOptions::default()).unwrap();
            zip.write_all(b"x").unwrap();
        }
        let zip = zip.finish().unwrap().into_inner();
        for bytes in [tar, zip] {
            let seen = inspect(&bytes, &Limits::default());
            prop_assert!(seen.error.is_none(), "{:?}", seen.error);
            for f in &seen.files {
                prop_assert!(stays_inside(&f.path), "kept {:?}", f.path);
            }
            for n in &names {
                let hostile = n.starts_with('/') || n.split(['/', '\\']).any(|p| p == "..");
                if hostile {
                    prop_assert!(
                        seen.unsafe_paths.iter().any(|u| u.path == *n),
                        "{n:?} not reported: {:?}", seen.unsafe_paths
                    );
                }
            }
        }
    }
}
