#include "extender/http/http_message.h"

#include "extender/common/logging.h"

namespace extender::http {

HttpResponse error_response(int status, std::string_view message) {
  HttpResponse res;
  res.status = status;
  res.body = "{\"error\":\"" + log_json_string(message) + "\"}";
  return res;
}

}  // namespace extender::http
