//! object_store's reusable integration suite (`object_store::integration`,
//! the functions the crate's own `azure_blob_test` runs against Azurite)
//! against Cerulean in Azurite's emulator mode. scripts/clients-rust.sh
//! starts `cerulean azurite` and points AZURITE_BLOB_STORAGE_URL at it. Each
//! test gets a container of its own, so the tests may run in parallel.

use std::sync::Arc;
use std::time::Duration;

use aws_lc_rs::hmac;
use base64::prelude::{Engine, BASE64_STANDARD};
use bytes::Bytes;
use object_store::azure::{MicrosoftAzure, MicrosoftAzureBuilder};
use object_store::path::Path;
use object_store::buffered::BufWriter;
use object_store::signer::Signer;
use object_store::{ObjectStore, ObjectStoreExt, TagSet};

const ACCOUNT: &str = "devstoreaccount1";
// Azurite's well-known development account key (also object_store's
// EMULATOR_ACCOUNT_KEY and Cerulean's default account).
const KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

fn endpoint() -> String {
    std::env::var("AZURITE_BLOB_STORAGE_URL")
        .expect("AZURITE_BLOB_STORAGE_URL: run this through scripts/clients-rust.sh")
        .trim_end_matches('/')
        .to_string()
}

/// A Shared Key signed request (Azure REST reference, "Authorize with
/// Shared Key"): object_store has no call to create a container or read
/// blob tags, so these two are made by hand.
async fn shared_key(method: reqwest::Method, path: &str, query: &[(&str, &str)]) -> reqwest::Response {
    let date = chrono::Utc::now().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let version = "2025-01-05";
    let mut canon_query: Vec<(String, String)> =
        query.iter().map(|(k, v)| (k.to_lowercase(), v.to_string())).collect();
    canon_query.sort();
    let mut resource = format!("/{ACCOUNT}/{ACCOUNT}{path}");
    for (k, v) in &canon_query {
        resource.push_str(&format!("\n{k}:{v}"));
    }
    let to_sign = format!(
        "{method}\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:{date}\nx-ms-version:{version}\n{resource}"
    );
    let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let url = format!("{}/{ACCOUNT}{path}?{}", endpoint(), q.join("&"));
    let key = hmac::Key::new(hmac::HMAC_SHA256, &BASE64_STANDARD.decode(KEY).unwrap());
    let sig = BASE64_STANDARD.encode(hmac::sign(&key, to_sign.as_bytes()).as_ref());
    let mut req = reqwest::Client::new()
        .request(method.clone(), url)
        .header("x-ms-date", date)
        .header("x-ms-version", version)
        .header("Authorization", format!("SharedKey {ACCOUNT}:{sig}"));
    if method == reqwest::Method::PUT {
        req = req.header("Content-Length", "0");
    }
    req.send().await.unwrap()
}

/// A fresh container named after the test, and a store on it in emulator mode.
async fn store(name: &str) -> MicrosoftAzure {
    let container = format!("rs-{}", name.replace('_', "-"));
    let resp = shared_key(reqwest::Method::PUT, &format!("/{container}"), &[("restype", "container")]).await;
    assert_eq!(resp.status(), 201, "create container {container}: {}", resp.text().await.unwrap());
    MicrosoftAzureBuilder::new()
        .with_use_emulator(true)
        .with_container_name(container)
        .build()
        .unwrap()
}

/// The same container through the crate's ordinary (non-emulator) mode:
/// an endpoint with the account in its path and the account key. In this
/// mode `list_with_offset` sends List Blobs' startFrom, which the emulator
/// mode filters on the client instead (Azurite has no startFrom:
/// Azure/Azurite#2619).
async fn endpoint_store(name: &str) -> MicrosoftAzure {
    let s = store(name).await;
    drop(s);
    MicrosoftAzureBuilder::new()
        .with_endpoint(format!("{}/{ACCOUNT}", endpoint()))
        .with_allow_http(true)
        .with_account(ACCOUNT)
        .with_access_key(KEY)
        .with_container_name(format!("rs-{}", name.replace('_', "-")))
        .build()
        .unwrap()
}

macro_rules! suite {
    ($($name:ident => |$s:ident| $body:expr;)*) => {$(
        #[tokio::test]
        async fn $name() {
            let $s = if stringify!($name).starts_with("endpoint_") {
                endpoint_store(stringify!($name)).await
            } else {
                store(stringify!($name)).await
            };
            $body;
        }
    )*};
}

suite! {
    put_get_delete_list => |s| object_store::integration::put_get_delete_list(&s).await;
    list_with_offset_exclusivity => |s| object_store::integration::list_with_offset_exclusivity(&s).await;
    get_opts => |s| object_store::integration::get_opts(&s).await;
    list_uses_directories_correctly => |s| object_store::integration::list_uses_directories_correctly(&s).await;
    list_with_delimiter => |s| object_store::integration::list_with_delimiter(&s).await;
    rename_and_copy => |s| object_store::integration::rename_and_copy(&s).await;
    copy_if_not_exists => |s| object_store::integration::copy_if_not_exists(&s).await;
    copy_rename_nonexistent_object => |s| object_store::integration::copy_rename_nonexistent_object(&s).await;
    stream_get => |s| object_store::integration::stream_get(&s).await;
    put_opts => |s| object_store::integration::put_opts(&s, true).await;
    multipart => |s| object_store::integration::multipart(&s, &s).await;
    multipart_put_part_out_of_order => |s| object_store::integration::multipart_put_part_out_of_order(&s, &s).await;
    multipart_race_condition => |s| object_store::integration::multipart_race_condition(&s, false).await;
    multipart_out_of_order => |s| object_store::integration::multipart_out_of_order(&s).await;
    list_paginated => |s| object_store::integration::list_paginated(&s, &s).await;
    put_get_attributes => |s| object_store::integration::put_get_attributes(&s).await;
    endpoint_list_with_offset_exclusivity => |s| object_store::integration::list_with_offset_exclusivity(&s).await;
    endpoint_list_paginated => |s| object_store::integration::list_paginated(&s, &s).await;
    endpoint_put_get_delete_list => |s| object_store::integration::put_get_delete_list(&s).await;
    signing => |s| signed_get(&s).await;
    tagging => |s| tags_round_trip(s).await;
}

/// The crate's `signing` check (a private test helper in object_store, so
/// written again here): a service SAS URL from `signed_url` reads the blob.
async fn signed_get(s: &MicrosoftAzure) {
    let data = Bytes::from("hello world");
    let path = Path::from("file.txt");
    s.put(&path, data.clone().into()).await.unwrap();
    let url = s.signed_url(http::Method::GET, &path, Duration::from_secs(60)).await.unwrap();
    let resp = reqwest::get(url).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.bytes().await.unwrap(), data);
}

/// The crate's `tagging` check (a private test helper in object_store,
/// written again here with the same tags): tags given to `put_opts`,
/// `put_multipart_opts` and `BufWriter::with_tags` (x-ms-tags) come back
/// from Get Blob Tags.
async fn tags_round_trip(s: MicrosoftAzure) {
    use tokio::io::AsyncWriteExt;
    let tags = [("foo.com=bar/s", "bananas/foo.com-_"), ("namespace/key.foo", "value with a space")];
    let mut set = TagSet::default();
    for (k, v) in tags {
        set.push(k, v);
    }
    let s: Arc<dyn ObjectStore> = Arc::new(s);
    s.put_opts(&Path::from("tag_test"), "test".into(), set.clone().into()).await.unwrap();
    let mut w = s.put_multipart_opts(&Path::from("tag_test_multi"), set.clone().into()).await.unwrap();
    w.put_part("foo".into()).await.unwrap();
    w.complete().await.unwrap();
    let mut buf = BufWriter::new(Arc::clone(&s), Path::from("tag_test_buf")).with_tags(set);
    buf.write_all(b"foo").await.unwrap();
    buf.shutdown().await.unwrap();

    // store("tagging") made the container rs-tagging.
    for blob in ["tag_test", "tag_test_multi", "tag_test_buf"] {
        let resp = shared_key(reqwest::Method::GET, &format!("/rs-tagging/{blob}"), &[("comp", "tags")]).await;
        assert_eq!(resp.status(), 200, "{blob}");
        let body = resp.text().await.unwrap();
        let mut got = Vec::new();
        for tag in body.split("<Tag>").skip(1) {
            let field = |name: &str| {
                let from = tag.find(&format!("<{name}>")).unwrap() + name.len() + 2;
                let to = tag.find(&format!("</{name}>")).unwrap();
                tag[from..to].to_string()
            };
            got.push((field("Key"), field("Value")));
        }
        got.sort();
        let want: Vec<(String, String)> = tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(got, want, "{blob}: {body}");
    }
}
