//! Presenting from the examples: an X11 window (x11rb over the process's own libxcb
//! connection, whose raw pointer is what `vkCreateXcbSurfaceKHR` takes) or a headless
//! surface, and the instance and device a swapchain needs, optionally under the Khronos
//! validation layer with every error message counted.

use crate::error::{Error, Result, VkResultExt};
use crate::icd::{restrict_loader_to, Icd};
use ash::{ext, khr, vk};
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{self, ConnectionExt as _};
use x11rb::wrapper::ConnectionExt as _;
use x11rb::xcb_ffi::XCBConnection;

pub const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Error messages the validation layer has reported in this process.
static VALIDATION_ERRORS: AtomicUsize = AtomicUsize::new(0);

pub fn validation_errors() -> usize {
    VALIDATION_ERRORS.load(Ordering::Relaxed)
}

fn x11_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::msg(format!("X11: {what}: {e}"))
}

/// A top-level window on a connection of our own: plain xcb, or the xcb connection under an
/// Xlib `Display` (for `VK_KHR_xlib_surface`).
pub struct Window {
    pub conn: XCBConnection,
    pub window: u32,
    pub visual: u32,
    /// The Xlib `Display *` whose connection `conn` is (kept open for the process).
    pub display: Option<*mut c_void>,
}

/// Opens `$DISPLAY` with Xlib (libX11 and libX11-xcb loaded at run time) and wraps the
/// Display's xcb connection.
fn xlib_connection() -> Result<(XCBConnection, usize, *mut c_void)> {
    type OpenDisplay = unsafe extern "C" fn(*const std::ffi::c_char) -> *mut c_void;
    type GetXcb = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
    type DefaultScreen = unsafe extern "C" fn(*mut c_void) -> std::ffi::c_int;
    let load = |name: &str| {
        // SAFETY: loading the X libraries runs no initialiser with preconditions.
        unsafe { libloading::Library::new(name) }.map_err(|e| x11_error(name, e))
    };
    // The libraries stay loaded for the process: the Display lives as long.
    let (x11, x11_xcb) = (Box::leak(Box::new(load("libX11.so.6")?)), Box::leak(Box::new(load("libX11-xcb.so.1")?)));
    // SAFETY: the symbols have these signatures (Xlib.h, Xlib-xcb.h); the Display is checked
    // before use and never closed, so its connection outlives every wrapper.
    unsafe {
        let open: libloading::Symbol<OpenDisplay> =
            x11.get(b"XOpenDisplay\0").map_err(|e| x11_error("XOpenDisplay", e))?;
        let screen: libloading::Symbol<DefaultScreen> =
            x11.get(b"XDefaultScreen\0").map_err(|e| x11_error("XDefaultScreen", e))?;
        let get: libloading::Symbol<GetXcb> =
            x11_xcb.get(b"XGetXCBConnection\0").map_err(|e| x11_error("XGetXCBConnection", e))?;
        let dpy = open(std::ptr::null());
        if dpy.is_null() {
            return Err(Error::msg("Xlib: cannot open the display"));
        }
        let conn =
            XCBConnection::from_raw_xcb_connection(get(dpy), false).map_err(|e| x11_error("XGetXCBConnection", e))?;
        Ok((conn, screen(dpy) as usize, dpy))
    }
}

impl Window {
    /// Opens `$DISPLAY` and maps a black `width` x `height` window at the origin.
    pub fn open(width: u16, height: u16, title: &str) -> Result<Window> {
        let (conn, screen) = XCBConnection::connect(None).map_err(|e| x11_error("cannot open the display", e))?;
        Self::create(conn, screen, None, width, height, title)
    }

    /// The same on an Xlib `Display` (its window is made through the Display's connection).
    pub fn open_xlib(width: u16, height: u16, title: &str) -> Result<Window> {
        let (conn, screen, dpy) = xlib_connection()?;
        Self::create(conn, screen, Some(dpy), width, height, title)
    }

    fn create(
        conn: XCBConnection,
        screen: usize,
        display: Option<*mut c_void>,
        width: u16,
        height: u16,
        title: &str,
    ) -> Result<Window> {
        let s = &conn.setup().roots[screen];
        let (root, visual, black) = (s.root, s.root_visual, s.black_pixel);
        let window = conn.generate_id().map_err(|e| x11_error("generate_id", e))?;
        let aux = xproto::CreateWindowAux::new().background_pixel(black);
        let class = xproto::WindowClass::INPUT_OUTPUT;
        conn.create_window(0, window, root, 0, 0, width, height, 0, class, 0, &aux)
            .map_err(|e| x11_error("CreateWindow", e))?;
        let title = title.as_bytes();
        conn.change_property8(
            xproto::PropMode::REPLACE,
            window,
            xproto::AtomEnum::WM_NAME,
            xproto::AtomEnum::STRING,
            title,
        )
        .map_err(|e| x11_error("ChangeProperty", e))?;
        conn.map_window(window).map_err(|e| x11_error("MapWindow", e))?;
        let w = Window { conn, window, visual, display };
        w.size()?;
        Ok(w)
    }

    /// The raw `xcb_connection_t *` for `VkXcbSurfaceCreateInfoKHR`.
    pub fn raw_connection(&self) -> *mut c_void {
        self.conn.get_raw_xcb_connection()
    }

    /// The window's size now (a round trip: every earlier request has been handled).
    pub fn size(&self) -> Result<[u32; 2]> {
        let g = self.conn.get_geometry(self.window).map_err(|e| x11_error("GetGeometry", e))?;
        let g = g.reply().map_err(|e| x11_error("GetGeometry", e))?;
        Ok([g.width as u32, g.height as u32])
    }

    pub fn resize(&self, width: u32, height: u32) -> Result<()> {
        let aux = xproto::ConfigureWindowAux::new().width(width).height(height);
        self.conn.configure_window(self.window, &aux).map_err(|e| x11_error("ConfigureWindow", e))?;
        self.size().map(|_| ())
    }

    /// The window's pixels as the server holds them (ZPixmap rows of the window's depth).
    pub fn pixels(&self) -> Result<(Vec<u8>, [u32; 2])> {
        let [w, h] = self.size()?;
        let img = self.conn.get_image(xproto::ImageFormat::Z_PIXMAP, self.window, 0, 0, w as u16, h as u16, !0);
        let img = img.map_err(|e| x11_error("GetImage", e))?.reply().map_err(|e| x11_error("GetImage", e))?;
        Ok((img.data, [w, h]))
    }

    pub fn destroy(&self) -> Result<()> {
        self.conn.destroy_window(self.window).map_err(|e| x11_error("DestroyWindow", e))?;
        self.size().map(|_| ()).or(Ok(()))
    }
}

/// Where frames go.
pub enum Target<'a> {
    Window(&'a Window),
    Headless,
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    _user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes a valid callback data structure with a C string message.
    let msg = unsafe { data.as_ref().and_then(|d| d.message_as_c_str()).map(|m| m.to_string_lossy().into_owned()) };
    let msg = msg.unwrap_or_default();
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        VALIDATION_ERRORS.fetch_add(1, Ordering::Relaxed);
        eprintln!("validation error: {msg}");
    } else {
        eprintln!("validation warning: {msg}");
    }
    vk::FALSE
}

/// An instance with the surface extensions, a surface, and a device with a swapchain.
pub struct Presenter {
    pub entry: ash::Entry,
    pub instance: ash::Instance,
    pub surface_fn: khr::surface::Instance,
    pub surface: vk::SurfaceKHR,
    pub physical: vk::PhysicalDevice,
    pub device: ash::Device,
    pub swapchain_fn: khr::swapchain::Device,
    pub queue: vk::Queue,
    pub family: u32,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    messenger: Option<(ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
}

/// Whether the loader offers the validation layer.
pub fn validation_available(entry: &ash::Entry) -> bool {
    // SAFETY: a plain enumeration.
    let layers = unsafe { entry.enumerate_instance_layer_properties() }.unwrap_or_default();
    layers.iter().any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER))
}

impl Presenter {
    /// Loads the loader for `icd`, creates the instance (with the validation layer if
    /// `validate`), the surface for `target`, and a device whose first queue family that
    /// can present is used.
    pub fn new(icd: &Icd, target: &Target<'_>, validate: bool) -> Result<Presenter> {
        restrict_loader_to(&icd.manifest()?);
        // SAFETY: loading the system's Vulkan loader; no other thread uses it yet.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| Error::msg(format!("cannot load the loader: {e}")))?;
        if validate && !validation_available(&entry) {
            return Err(Error::msg("the validation layer VK_LAYER_KHRONOS_validation is not installed"));
        }
        let mut exts = vec![khr::surface::NAME.as_ptr()];
        exts.push(match target {
            Target::Window(Window { display: Some(_), .. }) => khr::xlib_surface::NAME.as_ptr(),
            Target::Window(_) => khr::xcb_surface::NAME.as_ptr(),
            Target::Headless => ext::headless_surface::NAME.as_ptr(),
        });
        if validate {
            exts.push(ext::debug_utils::NAME.as_ptr());
        }
        let layers = if validate { vec![VALIDATION_LAYER.as_ptr()] } else { vec![] };
        let app = vk::ApplicationInfo::default().application_name(c"swapchain").api_version(vk::API_VERSION_1_2);
        let info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(&exts)
            .enabled_layer_names(&layers);
        // SAFETY: valid create info.
        let instance = unsafe { entry.create_instance(&info, None) }.vk("vkCreateInstance")?;
        let messenger = validate.then(|| messenger(&entry, &instance)).transpose()?;
        let surface = create_surface(&entry, &instance, target)?;
        let surface_fn = khr::surface::Instance::new(&entry, &instance);
        let (physical, family) = pick(&instance, &surface_fn, surface)?;
        let priorities = [1.0];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
        let dev_exts = [khr::swapchain::NAME.as_ptr()];
        let dinfo = vk::DeviceCreateInfo::default().queue_create_infos(&queues).enabled_extension_names(&dev_exts);
        // SAFETY: valid create info.
        let device = unsafe { instance.create_device(physical, &dinfo, None) }.vk("vkCreateDevice")?;
        // SAFETY: queue 0 of the family created above; plain queries.
        let (queue, memory) =
            unsafe { (device.get_device_queue(family, 0), instance.get_physical_device_memory_properties(physical)) };
        let swapchain_fn = khr::swapchain::Device::new(&instance, &device);
        Ok(Presenter {
            entry,
            instance,
            surface_fn,
            surface,
            physical,
            device,
            swapchain_fn,
            queue,
            family,
            memory,
            messenger,
        })
    }

    pub fn capabilities(&self) -> Result<vk::SurfaceCapabilitiesKHR> {
        // SAFETY: live handles.
        unsafe { self.surface_fn.get_physical_device_surface_capabilities(self.physical, self.surface) }
            .vk("vkGetPhysicalDeviceSurfaceCapabilitiesKHR")
    }

    pub fn formats(&self) -> Result<Vec<vk::SurfaceFormatKHR>> {
        // SAFETY: live handles.
        unsafe { self.surface_fn.get_physical_device_surface_formats(self.physical, self.surface) }
            .vk("vkGetPhysicalDeviceSurfaceFormatsKHR")
    }

    pub fn present_modes(&self) -> Result<Vec<vk::PresentModeKHR>> {
        // SAFETY: live handles.
        unsafe { self.surface_fn.get_physical_device_surface_present_modes(self.physical, self.surface) }
            .vk("vkGetPhysicalDeviceSurfacePresentModesKHR")
    }

    /// A memory type with all of `flags` among `bits`.
    pub fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        let types = &self.memory.memory_types[..self.memory.memory_type_count as usize];
        (0..types.len() as u32).find(|&i| bits & (1 << i) != 0 && types[i as usize].property_flags.contains(flags))
    }
}

impl Drop for Presenter {
    fn drop(&mut self) {
        // SAFETY: everything made from these handles has been destroyed by its owner.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.surface_fn.destroy_surface(self.surface, None);
            if let Some((f, m)) = self.messenger.take() {
                f.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

fn messenger(
    entry: &ash::Entry,
    instance: &ash::Instance,
) -> Result<(ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)> {
    let f = ext::debug_utils::Instance::new(entry, instance);
    let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING)
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(on_message));
    // SAFETY: valid create info.
    let m = unsafe { f.create_debug_utils_messenger(&info, None) }.vk("vkCreateDebugUtilsMessengerEXT")?;
    Ok((f, m))
}

pub fn create_surface(entry: &ash::Entry, instance: &ash::Instance, target: &Target<'_>) -> Result<vk::SurfaceKHR> {
    match target {
        Target::Window(Window { display: Some(dpy), window, .. }) => {
            let info = vk::XlibSurfaceCreateInfoKHR::default().dpy(*dpy).window(*window as vk::Window);
            // SAFETY: the Display and window outlive the surface.
            unsafe { khr::xlib_surface::Instance::new(entry, instance).create_xlib_surface(&info, None) }
                .vk("vkCreateXlibSurfaceKHR")
        }
        Target::Window(w) => {
            let info = vk::XcbSurfaceCreateInfoKHR::default().connection(w.raw_connection()).window(w.window);
            // SAFETY: the connection and window outlive the surface (the window is the caller's).
            unsafe { khr::xcb_surface::Instance::new(entry, instance).create_xcb_surface(&info, None) }
                .vk("vkCreateXcbSurfaceKHR")
        }
        Target::Headless => {
            let info = vk::HeadlessSurfaceCreateInfoEXT::default();
            // SAFETY: valid create info.
            unsafe { ext::headless_surface::Instance::new(entry, instance).create_headless_surface(&info, None) }
                .vk("vkCreateHeadlessSurfaceEXT")
        }
    }
}

/// The first device with a queue family that can present to `surface`.
fn pick(
    instance: &ash::Instance,
    f: &khr::surface::Instance,
    surface: vk::SurfaceKHR,
) -> Result<(vk::PhysicalDevice, u32)> {
    // SAFETY: plain queries on live handles.
    unsafe {
        for pd in instance.enumerate_physical_devices().vk("vkEnumeratePhysicalDevices")? {
            let n = instance.get_physical_device_queue_family_properties(pd).len() as u32;
            for family in 0..n {
                if f.get_physical_device_surface_support(pd, family, surface)
                    .vk("vkGetPhysicalDeviceSurfaceSupportKHR")?
                {
                    return Ok((pd, family));
                }
            }
        }
    }
    Err(Error::msg("no queue family can present to the surface"))
}

/// A swapchain and its images, with a semaphore per image that its present waits on.
pub struct Swapchain {
    pub handle: vk::SwapchainKHR,
    pub images: Vec<vk::Image>,
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    pub mode: vk::PresentModeKHR,
    /// Signaled by the submission that renders image i, waited on by its present.
    pub rendered: Vec<vk::Semaphore>,
}

impl Swapchain {
    /// A swapchain of `format` for the surface's current extent (or `extent` when the
    /// surface lets the swapchain decide), one image more than the minimum.
    pub fn new(
        p: &Presenter,
        format: vk::Format,
        extent: vk::Extent2D,
        mode: vk::PresentModeKHR,
        usage: vk::ImageUsageFlags,
        old: Option<&Swapchain>,
    ) -> Result<Swapchain> {
        let caps = p.capabilities()?;
        let extent = if caps.current_extent.width == u32::MAX { extent } else { caps.current_extent };
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count != 0 {
            count = count.min(caps.max_image_count);
        }
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(p.surface)
            .min_image_count(count)
            .image_format(format)
            .image_color_space(vk::ColorSpaceKHR::SRGB_NONLINEAR)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(vk::SurfaceTransformFlagsKHR::IDENTITY)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(mode)
            .clipped(true)
            .old_swapchain(old.map_or(vk::SwapchainKHR::null(), |o| o.handle));
        // SAFETY: valid create info on live handles.
        let handle = unsafe { p.swapchain_fn.create_swapchain(&info, None) }.vk("vkCreateSwapchainKHR")?;
        // SAFETY: the swapchain just made.
        let images = unsafe { p.swapchain_fn.get_swapchain_images(handle) }.vk("vkGetSwapchainImagesKHR")?;
        let rendered = images
            .iter()
            // SAFETY: plain creation.
            .map(|_| {
                unsafe { p.device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }.vk("vkCreateSemaphore")
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Swapchain { handle, images, format, extent, mode, rendered })
    }

    /// Destroys it (the caller has waited for the queue to be idle).
    pub fn destroy(&self, p: &Presenter) {
        // SAFETY: nothing in flight uses these any more.
        unsafe {
            for &s in &self.rendered {
                p.device.destroy_semaphore(s, None);
            }
            p.swapchain_fn.destroy_swapchain(self.handle, None);
        }
    }
}

/// A layout transition of a whole colour image on the transfer path.
pub fn image_barrier(
    image: vk::Image,
    from: vk::ImageLayout,
    to: vk::ImageLayout,
    src: vk::AccessFlags,
    dst: vk::AccessFlags,
) -> vk::ImageMemoryBarrier<'static> {
    vk::ImageMemoryBarrier::default()
        .image(image)
        .old_layout(from)
        .new_layout(to)
        .src_access_mask(src)
        .dst_access_mask(dst)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .subresource_range(COLOR_RANGE)
}

pub const COLOR_RANGE: vk::ImageSubresourceRange = vk::ImageSubresourceRange {
    aspect_mask: vk::ImageAspectFlags::COLOR,
    base_mip_level: 0,
    level_count: 1,
    base_array_layer: 0,
    layer_count: 1,
};
