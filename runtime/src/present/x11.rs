//! X11 presentation through the application's own connection, as Mesa's X11 WSI does: a
//! surface names an `xcb_connection_t` (for Xlib, the one under the application's `Display`,
//! from `XGetXCBConnection`) and a window. libxcb is loaded at run time (x11rb's
//! `dl-libxcb`), so the driver needs no X library to load.
//!
//! Every request is sent checked and its error collected here (`check`) or discarded
//! (`ignore_error`): none ever reaches the application's event queue. Nothing here selects
//! events on the window; the window's size is asked for (`GetGeometry`) when it matters.
//!
//! Images go to the window with `ShmPutImage` from a shared-memory segment when the server
//! offers MIT-SHM and can attach the segment (a local server), else with `PutImage` in bands
//! that fit the server's request size. A round trip after each frame tells the frame has been
//! read (so the segment can be reused) and whether the window still exists.

use super::convert::{self, PixelLayout};
use crate::{vk, VkResult};
use std::ffi::c_void;
use std::sync::OnceLock;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xproto::{self, ConnectionExt as _};
use x11rb::protocol::ErrorKind;
use x11rb::xcb_ffi::XCBConnection;

/// A window on the application's connection.
pub struct X11Window {
    conn: XCBConnection,
    pub window: u32,
}

/// An X error or a broken connection as a surface error: a window (or drawable) that no
/// longer exists, or a connection that is gone, is a lost surface.
fn lost(what: &str, e: impl std::fmt::Display) -> vk::Result {
    tracing::warn!("X11 presentation: {what}: {e}; the surface is lost");
    vk::Result::ERROR_SURFACE_LOST_KHR
}

fn reply_error(what: &str, e: ReplyError) -> vk::Result {
    match &e {
        ReplyError::X11Error(x) if !matches!(x.error_kind, ErrorKind::Window | ErrorKind::Drawable) => {
            tracing::error!("X11 presentation: {what}: {e:?}");
            vk::Result::ERROR_UNKNOWN
        }
        _ => lost(what, e),
    }
}

fn conn_error(what: &str, e: ConnectionError) -> vk::Result {
    lost(what, e)
}

/// libX11-xcb, for `XGetXCBConnection` (loaded once, kept for the process).
fn x11_xcb() -> Result<&'static libloading::Library, String> {
    static LIB: OnceLock<Result<libloading::Library, String>> = OnceLock::new();
    LIB.get_or_init(|| {
        // SAFETY: loading libX11-xcb runs no initialiser with preconditions; the Xlib it
        // depends on is the one the application already has loaded.
        unsafe { libloading::Library::new("libX11-xcb.so.1") }.map_err(|e| format!("cannot load libX11-xcb.so.1: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl X11Window {
    /// A window on an application's xcb connection.
    ///
    /// # Safety
    /// `conn` is a live `xcb_connection_t` that outlives the returned value (Vulkan requires
    /// the connection to outlive the surface).
    pub unsafe fn from_xcb(conn: *mut c_void, window: u32) -> Result<X11Window, String> {
        if conn.is_null() {
            return Err("the xcb connection is NULL".into());
        }
        x11rb::xcb_ffi::load_libxcb().map_err(|e| format!("cannot load libxcb: {e}"))?;
        // SAFETY: per the contract; we never disconnect it (should_drop = false).
        let conn = unsafe { XCBConnection::from_raw_xcb_connection(conn, false) }
            .map_err(|e| format!("cannot use the xcb connection: {e}"))?;
        Ok(X11Window { conn, window })
    }

    /// A window on an application's Xlib `Display`, through its xcb connection.
    ///
    /// # Safety
    /// `dpy` is a live `Display *` that outlives the returned value.
    pub unsafe fn from_xlib(dpy: *mut c_void, window: u64) -> Result<X11Window, String> {
        if dpy.is_null() {
            return Err("the Display is NULL".into());
        }
        let lib = x11_xcb()?;
        type GetXcb = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
        // SAFETY: XGetXCBConnection has this signature (X11/Xlib-xcb.h).
        let get: libloading::Symbol<GetXcb> =
            unsafe { lib.get(b"XGetXCBConnection\0") }.map_err(|e| format!("libX11-xcb: {e}"))?;
        // SAFETY: a live Display per the contract; the connection lives as long as it.
        let conn = unsafe { get(dpy) };
        let window = u32::try_from(window).map_err(|_| format!("window id {window:#x} is not an X id"))?;
        // SAFETY: the Display's connection, which outlives the surface with the Display.
        unsafe { Self::from_xcb(conn, window) }
    }

    /// The window's size, or SURFACE_LOST when it (or the connection) is gone.
    pub fn extent(&self) -> VkResult<[u32; 2]> {
        let g = self
            .conn
            .get_geometry(self.window)
            .map_err(|e| conn_error("GetGeometry", e))?
            .reply()
            .map_err(|e| reply_error("GetGeometry", e))?;
        Ok([g.width as u32, g.height as u32])
    }

    /// How the window wants its pixels: its visual's masks and its depth's pixmap format.
    pub fn layout(&self) -> VkResult<PixelLayout> {
        let attrs = self
            .conn
            .get_window_attributes(self.window)
            .map_err(|e| conn_error("GetWindowAttributes", e))?
            .reply()
            .map_err(|e| reply_error("GetWindowAttributes", e))?;
        self.visual_layout(attrs.visual).ok_or_else(|| {
            tracing::warn!("X11 presentation: window {:#x} has a visual that is not TrueColor", self.window);
            vk::Result::ERROR_SURFACE_LOST_KHR
        })
    }

    /// The pixel layout of `visual` if it is a TrueColor (or DirectColor) visual of the
    /// connection's screens.
    pub fn visual_layout(&self, visual: u32) -> Option<PixelLayout> {
        let setup = self.conn.setup();
        let (depth, v) = setup
            .roots
            .iter()
            .flat_map(|s| &s.allowed_depths)
            .find_map(|d| d.visuals.iter().find(|v| v.visual_id == visual).map(|v| (d.depth, v)))?;
        if !matches!(v.class, xproto::VisualClass::TRUE_COLOR | xproto::VisualClass::DIRECT_COLOR) {
            return None;
        }
        let fmt = setup.pixmap_formats.iter().find(|f| f.depth == depth)?;
        let layout = PixelLayout {
            depth,
            bits_per_pixel: fmt.bits_per_pixel,
            scanline_pad: fmt.scanline_pad,
            masks: [v.red_mask, v.green_mask, v.blue_mask],
            msb_first: setup.image_byte_order == xproto::ImageOrder::MSB_FIRST,
        };
        layout.supported().then_some(layout)
    }
}

/// A shared-memory segment attached to the server.
struct Shm {
    seg: u32,
    addr: *mut u8,
    len: usize,
}

// SAFETY: the segment is mapped for the process; only the engine thread that owns the
// `Target` touches it.
unsafe impl Send for Shm {}

impl Shm {
    /// A private segment of `len` bytes attached to the server, or `None` (no MIT-SHM, a
    /// remote server, no SysV shared memory).
    fn new(win: &X11Window, len: usize) -> Option<Shm> {
        let c = &win.conn;
        c.extension_information(x11rb::protocol::shm::X11_EXTENSION_NAME).ok()??;
        c.shm_query_version().ok()?.reply().ok()?;
        // SAFETY: plain SysV calls; the address is checked before use.
        let (id, addr) = unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, len, libc::IPC_CREAT | 0o600);
            if id < 0 {
                return None;
            }
            let addr = libc::shmat(id, std::ptr::null(), 0);
            // Removed now: it lives until both sides detach.
            let removed = libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            if addr as isize == -1 || removed != 0 {
                if addr as isize != -1 {
                    libc::shmdt(addr);
                }
                return None;
            }
            (id, addr as *mut u8)
        };
        let mut shm = Shm { seg: 0, addr, len };
        let seg = c.generate_id().ok();
        match seg.and_then(|seg| c.shm_attach(seg, id as u32, true).ok()?.check().ok().map(|_| seg)) {
            Some(seg) => {
                shm.seg = seg;
                Some(shm)
            }
            None => {
                tracing::debug!("X11 presentation: the server cannot attach shared memory; using PutImage");
                None
            }
        }
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `len` bytes mapped at `addr` for as long as self lives.
        unsafe { std::slice::from_raw_parts_mut(self.addr, self.len) }
    }
}

impl Drop for Shm {
    fn drop(&mut self) {
        // SAFETY: mapped by shmat in `new`, detached once.
        unsafe { libc::shmdt(self.addr as *const c_void) };
    }
}

/// What a swapchain draws its frames with: a GC on the window, the window's pixel layout,
/// and a shared-memory segment (or a buffer for PutImage) holding one converted frame.
pub struct Target {
    gc: u32,
    layout: PixelLayout,
    extent: [u32; 2],
    shm: Option<Shm>,
    staging: Vec<u8>,
}

impl Target {
    pub fn new(win: &X11Window, extent: [u32; 2]) -> VkResult<Target> {
        let layout = win.layout()?;
        let c = &win.conn;
        let gc = c.generate_id().map_err(|e| lost("generate_id", e))?;
        // No GraphicsExpose events: they would land in the application's event queue.
        let aux = xproto::CreateGCAux::new().graphics_exposures(0);
        c.create_gc(gc, win.window, &aux)
            .map_err(|e| conn_error("CreateGC", e))?
            .check()
            .map_err(|e| reply_error("CreateGC", e))?;
        let len = layout.row_bytes(extent[0]) * extent[1] as usize;
        let shm = Shm::new(win, len.max(1));
        let staging = if shm.is_some() { Vec::new() } else { vec![0; len] };
        tracing::debug!(
            "X11 presentation on window {:#x}: {}x{}, depth {}, {} bpp, {}",
            win.window,
            extent[0],
            extent[1],
            layout.depth,
            layout.bits_per_pixel,
            if shm.is_some() { "MIT-SHM" } else { "PutImage" }
        );
        Ok(Target { gc, layout, extent, shm, staging })
    }

    /// Shows one frame: `pixels` are the image's rows (`pitch` bytes apart, RGBA or BGRA).
    pub fn show(&mut self, win: &X11Window, pixels: &[u8], pitch: usize, bgra: bool) -> VkResult<()> {
        let [w, h] = self.extent;
        let l = self.layout;
        let c = &win.conn;
        let (wid, hgt) = (w as u16, h as u16);
        if let Some(shm) = &mut self.shm {
            convert::to_x11(pixels, pitch, bgra, w, h, &l, shm.bytes());
            let format = xproto::ImageFormat::Z_PIXMAP.into();
            return c
                .shm_put_image(win.window, self.gc, wid, hgt, 0, 0, wid, hgt, 0, 0, l.depth, format, false, shm.seg, 0)
                .map_err(|e| conn_error("ShmPutImage", e))?
                .check()
                .map_err(|e| reply_error("ShmPutImage", e));
        }
        convert::to_x11(pixels, pitch, bgra, w, h, &l, &mut self.staging);
        let row = l.row_bytes(w);
        // A PutImage request carries 24 bytes besides its data.
        let rows = ((c.maximum_request_bytes().saturating_sub(24)) / row.max(1)).clamp(1, h.max(1) as usize);
        let mut y = 0usize;
        while y < h as usize {
            let n = rows.min(h as usize - y);
            let data = &self.staging[y * row..(y + n) * row];
            let cookie = c
                .put_image(
                    xproto::ImageFormat::Z_PIXMAP,
                    win.window,
                    self.gc,
                    wid,
                    n as u16,
                    0,
                    y as i16,
                    0,
                    l.depth,
                    data,
                )
                .map_err(|e| conn_error("PutImage", e))?;
            y += n;
            if y < h as usize {
                cookie.ignore_error();
            } else {
                cookie.check().map_err(|e| reply_error("PutImage", e))?;
            }
        }
        Ok(())
    }

    /// Frees the GC and the segment on the server (the engine calls this before the
    /// swapchain's destruction returns, while the connection is still the application's).
    pub fn release(self, win: &X11Window) {
        let c = &win.conn;
        if let Ok(cookie) = c.free_gc(self.gc) {
            cookie.ignore_error();
        }
        if let Some(shm) = &self.shm {
            if let Ok(cookie) = c.shm_detach(shm.seg) {
                // The round trip makes sure the server has detached before we unmap.
                let _ = cookie.check();
            }
        }
        let _ = c.flush();
    }
}
