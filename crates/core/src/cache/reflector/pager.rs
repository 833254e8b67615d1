//! client-go's pager (`tools/pager/pager.go`, `ListWithAlloc` with `FullListIfExpired`):
//! one LIST as pages, following continue tokens; an expired continue token falls back to
//! one full list at the requested resourceVersion (and `resourceVersionMatch`). The
//! reflector's lists and `--check-consistency`'s Exact lists both page through here.

use crate::cache::listwatch::{ListOptions, ListerWatcher, SourceError, Transfer};
use crate::cache::object::ObjectRef;

use super::progress::ListProgress;

/// A list, all pages together.
pub(crate) struct Listed {
    pub items: Vec<ObjectRef>,
    pub resource_version: String,
    pub pages: u32,
    /// More than one page came back.
    pub paginated: bool,
    /// An expired continue token made the pager fall back to one full list.
    pub full_list_fallback: bool,
    /// Every page's transfer, the fallback's included.
    pub transfer: Transfer,
    /// Why a page was read again in JSON (the first page's `wire_fallback` that had one).
    pub wire_fallback: Option<String>,
}

/// Lists at `rv` in pages of `limit` (0: no paging), counting pages and items into
/// `progress`. Later pages carry no RV, only the continue token.
pub(super) async fn list<L: ListerWatcher>(
    lw: &L,
    progress: &ListProgress,
    rv: &str,
    limit: u32,
) -> Result<Listed, SourceError> {
    let first = ListOptions {
        resource_version: rv.to_owned(),
        limit: (limit > 0).then_some(limit),
        ..ListOptions::default()
    };
    list_from(lw, progress, first).await
}

/// [`list`] from the first page's options `first` (its continue token is ignored): later
/// pages carry only `first`'s limit and the continue token, as the API requires; the
/// fallback after an expired token is `first` without a limit.
pub(crate) async fn list_from<L: ListerWatcher>(
    lw: &L,
    progress: &ListProgress,
    first: ListOptions,
) -> Result<Listed, SourceError> {
    let first = ListOptions {
        continue_token: None,
        ..first
    };
    progress.reset();
    let mut page = lw.list(first.clone()).await?;
    progress.page(page.items.len());
    let mut items = std::mem::take(&mut page.items);
    let mut transfer = page.transfer;
    let mut wire_fallback = page.wire_fallback.take();
    let mut pages = 1;
    let mut paginated = false;
    while let Some(token) = page.continue_token.take() {
        paginated = true;
        let next = ListOptions {
            limit: first.limit,
            continue_token: Some(token),
            ..ListOptions::default()
        };
        page = match lw.list(next).await {
            Ok(p) => p,
            Err(e) if e.is_expired() => {
                let full = lw
                    .list(ListOptions {
                        limit: None,
                        ..first
                    })
                    .await?;
                transfer.add(full.transfer);
                return Ok(Listed {
                    items: full.items,
                    resource_version: full.resource_version,
                    pages: pages + 1,
                    paginated,
                    full_list_fallback: true,
                    transfer,
                    wire_fallback: wire_fallback.or(full.wire_fallback),
                });
            }
            Err(e) => return Err(e),
        };
        pages += 1;
        transfer.add(page.transfer);
        wire_fallback = wire_fallback.or(page.wire_fallback.take());
        progress.page(page.items.len());
        items.append(&mut page.items);
    }
    Ok(Listed {
        items,
        resource_version: page.resource_version,
        pages,
        paginated,
        full_list_fallback: false,
        transfer,
        wire_fallback,
    })
}
