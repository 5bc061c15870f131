#include "nsel/sys/host.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <unistd.h>

#include <chrono>

#include "nsel/core/values.hpp"

namespace nsel {

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string node_ip_address() {
  std::string ipv4;
  std::string ipv6;
  ifaddrs* interfaces = nullptr;
  if (getifaddrs(&interfaces) == 0) {
    for (const ifaddrs* i = interfaces; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0 ||
          (i->ifa_flags & IFF_LOOPBACK) != 0) {
        continue;
      }
      char text[INET6_ADDRSTRLEN] = {};
      if (i->ifa_addr->sa_family == AF_INET && ipv4.empty()) {
        const auto* address = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
        if (inet_ntop(AF_INET, &address->sin_addr, text, sizeof text)) ipv4 = text;
      } else if (i->ifa_addr->sa_family == AF_INET6 && ipv6.empty()) {
        const auto* address = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
        // Link-local addresses (fe80::/10) need an interface to be usable: not an identity.
        if (IN6_IS_ADDR_LINKLOCAL(&address->sin6_addr)) continue;
        if (inet_ntop(AF_INET6, &address->sin6_addr, text, sizeof text)) ipv6 = text;
      }
    }
    freeifaddrs(interfaces);
  }
  if (!ipv4.empty()) return ipv4;
  if (!ipv6.empty()) return ipv6;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    addrinfo* found = nullptr;
    if (getaddrinfo(host, nullptr, &hints, &found) == 0 && found != nullptr) {
      char text[NI_MAXHOST] = {};
      const int rc = getnameinfo(found->ai_addr, found->ai_addrlen, text, sizeof text, nullptr, 0,
                                 NI_NUMERICHOST);
      freeaddrinfo(found);
      if (rc == 0) return text;
    }
  }
  return "127.0.0.1";
}

std::string utc_timestamp_now() {
  return utc_time_text(std::chrono::system_clock::now(), true);
}

}  // namespace nsel
