import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Median wall time of `repetitions` runs of `body`, in seconds.
func medianSeconds(repetitions: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<repetitions {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return samples.sorted()[samples.count / 2]
}

/// Wall time of one run of `body`, in seconds, and its result.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let result = try body()
    return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// Peak resident memory of this process so far, in MB.
func peakResidentMegabytes() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

func report(_ name: String, _ seconds: Double, _ detail: String = "") {
    let padded = name.count >= 44 ? name : name + String(repeating: " ", count: 44 - name.count)
    print("\(padded) \(String(format: "%9.2f ms", seconds * 1000))  \(detail)")
}
