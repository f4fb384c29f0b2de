import ArgumentParser
import Foundation

/// Every flag of `vecsync-server` may also come from the environment (`VECSYNC_DATA`,
/// `VECSYNC_PORT`, …; a flag given on the command line wins), and the PostgreSQL password
/// from `VECSYNC_POSTGRES_PASSWORD` or the file `VECSYNC_POSTGRES_PASSWORD_FILE` names, so
/// that no secret needs to be in argv, which `ps` shows.
enum ServerEnvironment {
    /// The variables holding numbers, checked by ``check()``.
    static let numbers = [
        "VECSYNC_PORT", "VECSYNC_MAX_BODY_MIB", "VECSYNC_RATE", "VECSYNC_BURST", "VECSYNC_IDLE_TIMEOUT",
        "VECSYNC_STORE_TIMEOUT", "VECSYNC_MAX_CONNECTIONS", "VECSYNC_AUTH_FAILURE_RATE", "VECSYNC_AUTH_FAILURE_BURST",
        "VECSYNC_BODY_BUDGET_MIB", "VECSYNC_SPACE_QUOTA_MIB",
    ]

    /// The variables holding yes or no, checked by ``check()``.
    static let flags = ["VECSYNC_TRUST_FORWARDED_FOR"]

    /// A variable's value; nil when unset or empty.
    static func value(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// A number from the environment, or `fallback` (a value that is not a number is
    /// reported by ``check()``).
    static func number<T: LosslessStringConvertible>(_ name: String, _ fallback: T) -> T {
        value(name).flatMap(T.init) ?? fallback
    }

    /// Whether a yes-or-no variable says yes (`1`, `true`, `yes`, `on`); unset or empty is no.
    static func flag(_ name: String) -> Bool {
        value(name).map { ["1", "true", "yes", "on"].contains($0.lowercased()) } ?? false
    }

    /// Refuses a numeric variable that is set but not a number, and a yes-or-no one that is
    /// neither.
    static func check() throws {
        for name in numbers {
            if let text = value(name), Double(text) == nil {
                throw ValidationError("\(name) must be a number, not '\(text)'")
            }
        }
        for name in flags {
            if let text = value(name),
                !["1", "0", "true", "false", "yes", "no", "on", "off"].contains(text.lowercased())
            {
                throw ValidationError("\(name) must be 1 or 0 (true/false, yes/no, on/off), not '\(text)'")
            }
        }
    }

    /// `url` with the password of `VECSYNC_POSTGRES_PASSWORD` (or of the file named by
    /// `VECSYNC_POSTGRES_PASSWORD_FILE`, without its trailing newline) when it has none.
    static func postgresURL(_ url: String) throws -> String {
        let password: String?
        if let direct = value("VECSYNC_POSTGRES_PASSWORD") {
            password = direct
        } else if let file = value("VECSYNC_POSTGRES_PASSWORD_FILE") {
            do {
                password = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .newlines)
            } catch {
                throw ValidationError(
                    "cannot read VECSYNC_POSTGRES_PASSWORD_FILE '\(file)': \(error.localizedDescription)")
            }
        } else {
            password = nil
        }
        guard let password, var components = URLComponents(string: url), components.password == nil else { return url }
        components.password = password
        return components.string ?? url
    }
}
