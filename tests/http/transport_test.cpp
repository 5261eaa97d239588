#include "extender/http/transport.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>

namespace extender::http {
namespace {

TEST(PlainTransport, WritesSeveralBuffersInOrderReadsThemAndShutdownEndsTheStream) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  auto server = plain_transport(fds[0], PeerAddress{"127.0.0.1", 5, true});
  auto client = plain_transport(fds[1], PeerAddress{});
  EXPECT_EQ(server->handshake().status, IoStatus::kOk);
  EXPECT_FALSE(server->secure());
  EXPECT_TRUE(server->client_names().empty());
  EXPECT_EQ(server->peer().remote(), "127.0.0.1:5");

  char buf[64];
  EXPECT_EQ(server->read(buf, sizeof buf).status, IoStatus::kAgain);
  const std::array<std::string_view, 3> parts = {"head ", "", "and body"};
  const IoResult put = client->write(parts);
  ASSERT_EQ(put.status, IoStatus::kOk);
  EXPECT_EQ(put.bytes, 13u);
  const IoResult got = server->read(buf, sizeof buf);
  ASSERT_EQ(got.status, IoStatus::kOk);
  EXPECT_EQ(std::string(buf, got.bytes), "head and body");

  client->shutdown();
  EXPECT_EQ(server->read(buf, sizeof buf).status, IoStatus::kEof);
}

TEST(PeerAddress, LoopbackIsOnly127001AndIpv6LoopbackAndItsMappedForm) {
  const auto v4 = [](const char* ip) {
    sockaddr_storage ss{};
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(8888);
    inet_pton(AF_INET, ip, &a->sin_addr);
    return peer_address(ss);
  };
  const auto v6 = [](const char* ip) {
    sockaddr_storage ss{};
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(9);
    inet_pton(AF_INET6, ip, &a->sin6_addr);
    return peer_address(ss);
  };
  EXPECT_TRUE(v4("127.0.0.1").loopback);
  EXPECT_FALSE(v4("127.0.0.2").loopback);
  EXPECT_FALSE(v4("10.1.2.3").loopback);
  EXPECT_EQ(v4("10.1.2.3").remote(), "10.1.2.3:8888");
  EXPECT_TRUE(v6("::1").loopback);
  EXPECT_TRUE(v6("::ffff:127.0.0.1").loopback);
  EXPECT_FALSE(v6("::ffff:127.0.0.6").loopback);
  EXPECT_EQ(v6("::1").remote(), "[::1]:9");
}

TEST(ListenSocket, ListensOnAFreePortAndNamesWhatFailed) {
  auto fd = listen_socket("127.0.0.1", 0);
  ASSERT_TRUE(fd.ok()) << fd.message();
  ::close(*fd);
  auto bad = listen_socket("203.0.113.1", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("cannot listen on 203.0.113.1:0"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace extender::http
