//! Downloads an image archive (or a snapshot) from the market server: resumable (an interrupted download goes on
//! from where it stopped, with an HTTP range), checked against its sha256 before use.

use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;

/// Downloads `url` into `dir/<sha256>.tar` (kept: a second install of the same image needs no
/// download); `progress` gets the bytes present so far.
pub async fn archive(
    client: &reqwest::Client,
    url: &str,
    secret: &str,
    dir: &Path,
    sha256: &str,
    size: u64,
    progress: impl Fn(u64),
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let done = dir.join(format!("{sha256}.tar"));
    // One download of an archive at a time: two installs of apps on one image at once wrote the
    // same `.part`, and the second found it renamed under it ("No such file or directory").
    let lock = one_at_a_time(&done);
    let _held = lock.lock().await;
    if done.exists() {
        return Ok(done);
    }
    download(client, url, secret, &done, sha256, size, progress).await.map_err(|e| format!("{e} (the image archive)"))?;
    Ok(done)
}

/// The lock of the download into `path`, shared by everyone downloading it now.
fn one_at_a_time(path: &Path) -> std::sync::Arc<tokio::sync::Mutex<()>> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, Weak};
    static LOCKS: Mutex<Option<HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>>> = Mutex::new(None);
    let mut locks = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    let locks = locks.get_or_insert_with(HashMap::new);
    locks.retain(|_, l| l.strong_count() > 0);
    if let Some(l) = locks.get(path).and_then(Weak::upgrade) {
        return l;
    }
    let l = Arc::new(tokio::sync::Mutex::new(()));
    locks.insert(path.to_path_buf(), Arc::downgrade(&l));
    l
}

/// Downloads `url` into `done` through `<done>.part` (resumed with a range when a part is there),
/// checked against `sha256` before it takes its name; a damaged part is thrown away.
pub async fn download(
    client: &reqwest::Client,
    url: &str,
    secret: &str,
    done: &Path,
    sha256: &str,
    size: u64,
    progress: impl Fn(u64),
) -> Result<(), String> {
    if let Some(dir) = done.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let part = done.with_extension("part");
    let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
    if have < size {
        let mut req = client.get(url).bearer_auth(secret);
        if have > 0 {
            req = req.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let mut res = req.send().await.map_err(|e| format!("downloading: {e}"))?;
        let append = match res.status().as_u16() {
            206 => true,
            200 => false,
            s => return Err(format!("downloading: the market server answered {s}")),
        };
        let mut f = tokio::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&part)
            .await
            .map_err(|e| format!("writing {}: {e}", part.display()))?;
        let mut got = if append { have } else { 0 };
        while let Some(chunk) = res.chunk().await.map_err(|e| format!("downloading: {e}"))? {
            f.write_all(&chunk).await.map_err(|e| format!("writing: {e}"))?;
            got += chunk.len() as u64;
            progress(got);
        }
        f.flush().await.map_err(|e| e.to_string())?;
    }
    let part2 = part.clone();
    let digest = tokio::task::spawn_blocking(move || zmarket_protocol::snapshots::sha256_file(&part2)).await.map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
    if digest != sha256 {
        let _ = std::fs::remove_file(&part);
        return Err("the download is damaged (its sha256 does not match); it will be downloaded again".into());
    }
    std::fs::rename(&part, done).map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// Serves `data` with ranges (tower-http's ServeFile, as the market does).
    async fn serve(data: &[u8]) -> (String, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.tar");
        std::fs::write(&file, data).unwrap();
        let app = axum::Router::new().route_service("/a", tower_http::services::ServeFile::new(file));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/a", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (url, dir)
    }

    #[tokio::test]
    async fn a_partial_download_resumes_with_a_range() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let sha = hex::encode(Sha256::digest(&data));
        let (url, _srv) = serve(&data).await;
        let client = reqwest::Client::new();

        // The first half is already there: only the rest is fetched, and the whole checks out.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(format!("{sha}.part")), &data[..150_000]).unwrap();
        let max = std::sync::Mutex::new(0u64);
        let min = std::sync::Mutex::new(u64::MAX);
        let path = archive(&client, &url, "s", dir.path(), &sha, data.len() as u64, |n| {
            let mut hi = max.lock().unwrap();
            *hi = n.max(*hi);
            let mut lo = min.lock().unwrap();
            *lo = n.min(*lo);
        })
        .await
        .unwrap();
        assert_eq!(std::fs::read(path).unwrap(), data);
        assert!(*min.lock().unwrap() > 150_000, "the download started over");
        assert_eq!(*max.lock().unwrap(), data.len() as u64);

        // A damaged first part is detected by the sha256 and thrown away.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(format!("{sha}.part")), vec![0u8; 150_000]).unwrap();
        let e = archive(&client, &url, "s", dir.path(), &sha, data.len() as u64, |_| {}).await.unwrap_err();
        assert!(e.contains("sha256"), "{e}");
        assert!(!dir.path().join(format!("{sha}.part")).exists());
        // … and the next try downloads it whole.
        archive(&client, &url, "s", dir.path(), &sha, data.len() as u64, |_| {}).await.unwrap();
    }

    /// Two installs of apps on one image at once: both get the archive, downloaded once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_downloads_of_one_archive_at_once_both_get_it() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 241) as u8).collect();
        let sha = hex::encode(Sha256::digest(&data));
        let (url, _srv) = serve(&data).await;
        let client = reqwest::Client::new();
        let dir = tempfile::tempdir().unwrap();
        let size = data.len() as u64;
        let (a, b) = tokio::join!(
            archive(&client, &url, "s", dir.path(), &sha, size, |_| {}),
            archive(&client, &url, "s", dir.path(), &sha, size, |_| {}),
        );
        assert_eq!(a.unwrap(), b.unwrap());
        assert_eq!(std::fs::read(dir.path().join(format!("{sha}.tar"))).unwrap(), data);
    }
}
