import Foundation
import Testing
import SyncCommit
import TestSupport

/// The time a vault may spend opening versions from elsewhere, counted in a sliding window.
@Suite("ForeignWorkAllowance: time for opening versions from elsewhere, per vault and window")
struct ForeignWorkAllowanceTests {
    static let start = Date(timeIntervalSince1970: 2_000_000)

    @Test("admits until the window's time is spent, then not until the oldest openings leave the window")
    func slidingWindow() {
        let allowance = ForeignWorkAllowance(seconds: 10, per: 100)
        #expect(allowance.admits(at: Self.start) && allowance.nextRoom(at: Self.start) == Self.start)
        allowance.charge(6, endingAt: Self.start.addingTimeInterval(1))
        #expect(allowance.admits(at: Self.start.addingTimeInterval(2)))
        allowance.charge(6, endingAt: Self.start.addingTimeInterval(3))
        #expect(!allowance.admits(at: Self.start.addingTimeInterval(4)), "12 s spent of 10")
        #expect(allowance.nextRoom(at: Self.start.addingTimeInterval(4)) == Self.start.addingTimeInterval(101), "room once the first leaves the window")
        #expect(!allowance.admits(at: Self.start.addingTimeInterval(100.9)))
        #expect(allowance.admits(at: Self.start.addingTimeInterval(101.1)))
    }

    @Test("generated openings: never more than the allowance plus one opening within any window, and room again once the window has passed", arguments: 0..<40)
    func generatedOpenings(seed: UInt64) {
        var random = SeededRandom(seed: 0xA110 &+ seed)
        let seconds = Double.random(in: 1...30, using: &random), window = Double.random(in: 10...600, using: &random)
        let allowance = ForeignWorkAllowance(seconds: seconds, per: window)
        var now = Self.start
        var openings: [(end: Date, seconds: Double)] = []
        let longest = 8.0
        for _ in 0..<Int.random(in: 1...400, using: &random) {
            now += Double.random(in: 0...(window / 20), using: &random)
            guard allowance.admits(at: now) else {
                #expect(allowance.nextRoom(at: now) > now, "seed \(seed): no room, yet room now")
                continue
            }
            let cost = Double.random(in: 0...longest, using: &random)
            now += cost
            allowance.charge(cost, endingAt: now)
            openings.append((now, cost))
            let inWindow = openings.filter { $0.end >= now.addingTimeInterval(-window) }.reduce(0) { $0 + $1.seconds }
            #expect(inWindow < seconds + longest + 1e-9, "seed \(seed): \(inWindow) s within one window, allowance \(seconds)")
        }
        #expect(allowance.admits(at: now.addingTimeInterval(window + 0.001)), "seed \(seed): no room a whole window later")
    }
}
