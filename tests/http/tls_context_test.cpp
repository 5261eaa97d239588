#include "extender/http/tls_context.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/fake_clock.h"
#include "support/test_pki.h"

namespace extender::http {
namespace {

using namespace std::chrono_literals;
namespace pki = kube::testing;

class TlsFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("extender-tls-context-" + std::to_string(getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    ca_ = pki::issue("ca", pki::Role::kCa, nullptr);
    write_server_cert("server-1");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Written beside, then renamed over: a Secret volume's swap.
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / (name + ".tmp")) << text;
    std::filesystem::rename(dir_ / (name + ".tmp"), dir_ / name);
  }
  void write_server_cert(const std::string& cn) {
    auto server = pki::issue(cn, pki::Role::kServer, &ca_);
    write("tls.key", server.key_pem);
    write("tls.crt", server.cert_pem);
  }
  TlsOptions options() const { return {(dir_ / "tls.crt").string(), (dir_ / "tls.key").string(), "", {}}; }

  pki::Issued ca_;
  std::filesystem::path dir_;
};

TEST_F(TlsFiles, ChangedFilesAreLookedAtOnceTheCheckIntervalHasPassedOnTheSourcesClock) {
  testing::FakeClock clock;
  auto source = TlsContextSource::create(options(), "scheduler", 1s, clock);
  ASSERT_TRUE(source) << source.message();
  const SslContext first = (*source)->current();
  ASSERT_NE(first, nullptr);

  write_server_cert("server-2");
  clock.advance(999ms);
  EXPECT_EQ((*source)->current(), first) << "the files were looked at again before the interval had passed";
  clock.advance(1ms);
  const SslContext second = (*source)->current();
  EXPECT_NE(second, first) << "the changed files were not loaded once the interval had passed";
  EXPECT_EQ((*source)->current(), second);
}

TEST_F(TlsFiles, FilesThatDoNotLoadKeepThePreviousContext) {
  testing::FakeClock clock;
  auto source = TlsContextSource::create(options(), "scheduler", 1s, clock);
  ASSERT_TRUE(source) << source.message();
  const SslContext first = (*source)->current();
  write("tls.key", pki::issue("other", pki::Role::kServer, &ca_).key_pem);  // no longer the certificate's key
  clock.advance(1s);
  EXPECT_EQ((*source)->current(), first);
}

}  // namespace
}  // namespace extender::http
