// The metrics HTTP endpoint over real loopback TCP: /metrics content and
// type, owner routes with query parameters, 404/405, garbage bytes, a port
// already in use, and explicit start/stop.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "common/metrics/exposition.h"
#include "common/metrics/http_endpoint.h"

namespace kiln::metrics {
namespace {

std::unique_ptr<HttpEndpoint> makeEndpoint(const Registry& registry,
                                           HttpEndpointOptions options = {}) {
  auto endpoint = HttpEndpoint::create(options, registry, makeNullLogger("test"));
  EXPECT_TRUE(endpoint.ok()) << endpoint.status().toString();
  return std::move(endpoint).value();
}

httplib::Client client(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2);
  c.set_read_timeout(2);
  return c;
}

// Sends raw bytes and returns whatever comes back before the peer closes.
std::string rawExchange(int port, const std::string& bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    (void)!::write(fd, bytes.data(), bytes.size());
    ::shutdown(fd, SHUT_WR);
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) reply.append(buffer, n);
  }
  ::close(fd);
  return reply;
}

TEST(HttpEndpointTest, ServesTheRegistryAtMetricsOnAnyFreeLoopbackPort) {
  Registry registry;
  auto* steps = *registry.counter("kiln_steps_total", "Steps.", {"experiment"});
  (*steps->withLabels({"e1"}))->increment(41);
  auto endpoint = makeEndpoint(registry);
  auto port = endpoint->start();
  ASSERT_TRUE(port.ok()) << port.status().toString();
  EXPECT_GT(*port, 0);
  EXPECT_EQ(endpoint->port(), *port);
  EXPECT_EQ(endpoint->url(), "http://127.0.0.1:" + std::to_string(*port) + "/metrics");
  EXPECT_TRUE(endpoint->running());

  auto c = client(*port);
  (*steps->withLabels({"e1"}))->increment();  // a scrape sees the live value
  auto response = c.Get("/metrics");
  ASSERT_TRUE(response) << httplib::to_string(response.error());
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->get_header_value("Content-Type"), kTextContentType);
  EXPECT_EQ(response->body,
            "# HELP kiln_steps_total Steps.\n"
            "# TYPE kiln_steps_total counter\n"
            "kiln_steps_total{experiment=\"e1\"} 42\n");
  EXPECT_EQ(response->body, registry.renderText());
  auto head = c.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

TEST(HttpEndpointTest, OwnerRoutesGetTheirQueryAndOthersGet404Or405) {
  Registry registry;
  auto endpoint = makeEndpoint(registry);
  ASSERT_TRUE(endpoint
                  ->addRoute("/dashboard",
                             [](const HttpRequest& request) {
                               auto experiment = request.params.find("experiment");
                               return HttpResponse{
                                   200, "text/html; charset=utf-8",
                                   "<p>" +
                                       (experiment == request.params.end() ? std::string("all")
                                                                           : experiment->second) +
                                       "</p>"};
                             })
                  .ok());
  EXPECT_FALSE(
      endpoint->addRoute("/dashboard", [](const HttpRequest&) { return HttpResponse{}; }).ok());
  EXPECT_FALSE(
      endpoint->addRoute("/metrics", [](const HttpRequest&) { return HttpResponse{}; }).ok());
  EXPECT_FALSE(
      endpoint->addRoute("no-slash", [](const HttpRequest&) { return HttpResponse{}; }).ok());
  EXPECT_FALSE(endpoint->addRoute("/empty", HttpHandler{}).ok());
  auto port = endpoint->start();
  ASSERT_TRUE(port.ok());
  auto late = endpoint->addRoute("/late", [](const HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.message().find("after start"), std::string::npos);

  auto c = client(*port);
  auto page = c.Get("/dashboard?experiment=a%20b");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "<p>a b</p>");
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  auto missing = c.Get("/nothing-here");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto late404 = c.Get("/late");
  ASSERT_TRUE(late404);
  EXPECT_EQ(late404->status, 404);
  auto post = c.Post("/metrics", "x=1", "application/x-www-form-urlencoded");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto del = c.Delete("/dashboard");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  auto postMissing = c.Post("/nope", "", "text/plain");
  ASSERT_TRUE(postMissing);
  EXPECT_EQ(postMissing->status, 404);
}

TEST(HttpEndpointTest, GarbageAndThrowingHandlersDoNotStopService) {
  Registry registry;
  auto endpoint = makeEndpoint(registry);
  ASSERT_TRUE(endpoint
                  ->addRoute("/boom",
                             [](const HttpRequest&) -> HttpResponse {
                               throw std::runtime_error("handler bug");
                             })
                  .ok());
  auto port = endpoint->start();
  ASSERT_TRUE(port.ok());
  std::string garbage(2000, '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 131 + 7);
  std::string reply = rawExchange(*port, garbage);
  EXPECT_TRUE(reply.empty() || reply.rfind("HTTP/1.1 400", 0) == 0) << reply.substr(0, 80);
  reply = rawExchange(*port, "BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(reply.empty() || reply.rfind("HTTP/1.1 400", 0) == 0) << reply.substr(0, 80);
  reply = rawExchange(*port, "GET /" + std::string(100000, 'a') + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(reply.find("200 OK"), std::string::npos);
  auto c = client(*port);
  auto boom = c.Get("/boom");
  ASSERT_TRUE(boom);
  EXPECT_EQ(boom->status, 500);
  auto fine = c.Get("/metrics");
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->status, 200);
}

TEST(HttpEndpointTest, BadOptionsAndBusyPortsAreErrorsNotCrashes) {
  Registry registry;
  HttpEndpointOptions bad;
  bad.port = 70000;
  auto outOfRange = HttpEndpoint::create(bad, registry, nullptr);
  ASSERT_FALSE(outOfRange.ok());
  EXPECT_EQ(outOfRange.status().code(), ErrorCode::kInvalidArgument);
  bad.port = 0;
  bad.host = "";
  EXPECT_FALSE(HttpEndpoint::create(bad, registry, nullptr).ok());

  auto first = makeEndpoint(registry);
  auto port = first->start();
  ASSERT_TRUE(port.ok());
  HttpEndpointOptions same;
  same.port = *port;
  auto second = makeEndpoint(registry, same);
  auto busy = second->start();
  ASSERT_FALSE(busy.ok());
  EXPECT_NE(busy.status().message().find(std::to_string(*port)), std::string::npos);

  HttpEndpointOptions foreign;
  foreign.host = "203.0.113.77";  // TEST-NET-3: documentation only, never local
  auto third = makeEndpoint(registry, foreign);
  EXPECT_FALSE(third->start().ok());
}

TEST(HttpEndpointTest, StopIsExplicitPromptAndFinal) {
  Registry registry;
  auto endpoint = makeEndpoint(registry);
  auto port = endpoint->start();
  ASSERT_TRUE(port.ok());
  auto started = std::chrono::steady_clock::now();
  endpoint->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  EXPECT_FALSE(endpoint->running());
  endpoint->stop();  // again: harmless
  auto c = client(*port);
  EXPECT_FALSE(c.Get("/metrics"));  // nobody listens any more
  EXPECT_FALSE(endpoint->start().ok());
  // Start and stop in quick succession, bounded in count.
  for (int i = 0; i < 20; ++i) {
    auto e = makeEndpoint(registry);
    ASSERT_TRUE(e->start().ok());
    e->stop();
  }
}

}  // namespace
}  // namespace kiln::metrics
