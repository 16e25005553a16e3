// Model of ART's logging for the host tests (libartbase/base/logging.h): LOG(FATAL) aborts,
// DCHECK is on (these tests want ART's debug-build checks).
#ifndef HUBBLE_ART_MODEL_BASE_LOGGING_H_
#define HUBBLE_ART_MODEL_BASE_LOGGING_H_

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace art {
namespace model {

enum Severity { WARNING, ERROR, FATAL };

class LogMessage {
 public:
  explicit LogMessage(Severity severity) : severity_(severity) {}
  ~LogMessage() {
    std::cerr << "art-model: " << stream_.str() << std::endl;
    if (severity_ == FATAL) {
      std::abort();
    }
  }
  std::ostream& stream() { return stream_; }

 private:
  Severity severity_;
  std::ostringstream stream_;
};

}  // namespace model
}  // namespace art

#define LOG(severity) ::art::model::LogMessage(::art::model::severity).stream()
#define DCHECK(cond) \
  if (!(cond)) ::art::model::LogMessage(::art::model::FATAL).stream() << "DCHECK " #cond " "

#endif  // HUBBLE_ART_MODEL_BASE_LOGGING_H_
