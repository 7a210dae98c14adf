//! The written documents (issue 17): Terms of Use, Privacy Policy and the user guide are pages in
//! both languages; the operator replaces one with a file in the data directory; the guide's PDFs
//! are served from the binary.

use crate::common::TestApp;

async fn page(app: &TestApp, path: &str, lang: &str) -> (u16, String) {
    let res = app.client.get(app.url(&format!("{path}?language={lang}"))).send().await.unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

#[tokio::test]
async fn documents_are_pages_in_both_languages() {
    let app = TestApp::spawn().await;
    for (path, en, zh) in [
        // (In the page state, which holds the text whether or not the UI bundle was built.)
        ("/terms-of-use", "Terms of Use\\u003c/h1\\u003e", "用户协议\\u003c/h1\\u003e"),
        ("/privacy-policy", "Privacy Policy\\u003c/h1\\u003e", "隐私政策\\u003c/h1\\u003e"),
        ("/guide", "ZMarket user guide\\u003c/h1\\u003e", "ZMarket 用户指南\\u003c/h1\\u003e"),
    ] {
        let (s, html) = page(&app, path, "en").await;
        assert_eq!(s, 200, "{path}");
        assert!(html.contains(en), "{path} en");
        assert!(!html.contains("{product}"), "{path}: the product name is filled in");
        let (s, html) = page(&app, path, "zh").await;
        assert_eq!(s, 200, "{path}");
        assert!(html.contains(zh), "{path} zh");
    }
    // The same documents on the phone pages.
    let (s, html) = page(&app, "/m/guide", "zh").await;
    assert_eq!(s, 200);
    assert!(html.contains("ZMarket 用户指南"));
}

#[tokio::test]
async fn the_operator_replaces_a_document_with_a_file_in_the_data_dir() {
    let app = TestApp::spawn().await;
    let dir = app.dir.path().join("documents");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("terms-of-use.html"), "<h1>House rules of {product}</h1><p>Be kind.</p>").unwrap();
    std::fs::write(dir.join("privacy-policy.zh.html"), "<h1>本站隐私说明</h1>").unwrap();
    let (_, html) = page(&app, "/terms-of-use", "en").await;
    assert!(html.contains("House rules of ZMarket"), "{html}");
    let (_, html) = page(&app, "/terms-of-use", "zh").await;
    assert!(html.contains("House rules of ZMarket"), "one file serves every language");
    let (_, html) = page(&app, "/privacy-policy", "zh").await;
    assert!(html.contains("本站隐私说明"));
    // Only the Chinese text was replaced: the English one is the shipped text.
    let (_, html) = page(&app, "/privacy-policy", "en").await;
    assert!(html.contains("Privacy Policy\\u003c/h1\\u003e"));
}

#[tokio::test]
async fn the_guide_pdfs_are_served_from_the_binary() {
    let app = TestApp::spawn().await;
    for lang in ["en", "zh"] {
        let res = app.get(&format!("/assets/documents/zmarket-guide-{lang}.pdf")).await;
        assert_eq!(res.status(), 200, "{lang}");
        assert_eq!(res.headers()["content-type"], "application/pdf");
        let body = res.bytes().await.unwrap();
        assert!(body.starts_with(b"%PDF-"), "{lang}");
        assert!(body.len() > 20_000, "{lang}: {} bytes", body.len());
    }
}
