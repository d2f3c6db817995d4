//! Files read again on every tick of the reload timer, by path, so that an in-place
//! write, a rename over the file and a swapped symlink (as Kubernetes updates mounted
//! Secrets) all show. Only a change of content is reported, as upstream's dynamic
//! certificate controllers compare the bytes, so that a bad file is reported once, not
//! on every tick.

use std::path::PathBuf;

/// What the files held at the last look: their contents, or why they could not be read.
type Seen = Result<Vec<Vec<u8>>, String>;

/// A set of files read together (a certificate and its key).
#[derive(Debug)]
pub struct Watched {
    paths: Vec<PathBuf>,
    seen: Option<Seen>,
}

impl Watched {
    pub fn new(paths: Vec<PathBuf>) -> Watched {
        Watched { paths, seen: None }
    }

    /// The files' contents, or the first read error, if that differs from the last
    /// look (always at the first).
    pub fn changed(&mut self) -> Option<Seen> {
        let now: Seen = self
            .paths
            .iter()
            .map(|path| {
                std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))
            })
            .collect();
        if self.seen.as_ref() == Some(&now) {
            return None;
        }
        self.seen = Some(now.clone());
        Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_change_is_reported_and_a_symlink_swap_is_one() {
        let dir = crate::tls::tests::tempdir("watched");
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, "one").unwrap();
        std::fs::write(&b, "two").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let mut watched = Watched::new(vec![link.clone()]);
        assert_eq!(watched.changed(), Some(Ok(vec![b"one".to_vec()])));
        assert_eq!(watched.changed(), None);
        // Swap the link atomically, as Kubernetes' atomic writer does.
        let next = dir.join("link.next");
        std::os::unix::fs::symlink(&b, &next).unwrap();
        std::fs::rename(&next, &link).unwrap();
        assert_eq!(watched.changed(), Some(Ok(vec![b"two".to_vec()])));
        // Gone: reported once, then again only when it comes back.
        std::fs::remove_file(&link).unwrap();
        assert!(matches!(watched.changed(), Some(Err(e)) if e.contains("reading")));
        assert_eq!(watched.changed(), None);
        std::fs::write(&link, "three").unwrap();
        assert_eq!(watched.changed(), Some(Ok(vec![b"three".to_vec()])));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
