import Glibc
import MyPassSync
import Testing

@Suite("Process protection")
struct ProcessProtectionTests {
    @Test("core dumps off and the process non-dumpable")
    func coreDumps() throws {
        #expect(ProcessProtection.disableCoreDumps())
        #expect(!ProcessProtection.isDumpable)
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        #expect(limit.rlim_cur == 0 && limit.rlim_max == 0)
    }
}
