// The dashboard's files — console.html, console.css and console.js beside this file — are
// package resources embedded in the code at build time (`.embedInCode` in Package.swift):
// the binary carries them, so an installed `reel` needs no resource bundle beside it.

/// The console's one page.
enum DashboardPage {
    static let html = String(decoding: PackageResources.console_html, as: UTF8.self)
}

/// The console's style sheet.
enum DashboardStyle {
    static let css = String(decoding: PackageResources.console_css, as: UTF8.self)
}

/// The console's script.
enum DashboardScript {
    static let js = String(decoding: PackageResources.console_js, as: UTF8.self)
}
