#include "sync/state.hpp"

#include <sys/stat.h>

#include <charconv>

#include "nsel/core/error.hpp"
#include "nsel/sys/files.hpp"

namespace nsel::sync_detail {

namespace {

// The state lives in a folder of ours: a link planted in its place is neither read nor written
// through.
bool own_state_folder(const std::filesystem::path& mirrored) {
  struct stat st {};
  return ::lstat((mirrored / SyncState::kFolder).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

void SyncState::load(const std::filesystem::path& mirrored) {
  if (!own_state_folder(mirrored)) return;
  const std::optional<std::string> read = read_small_file(mirrored / kFileName);
  if (!read) return;
  const std::string& text = *read;
  constexpr std::string_view header = "nsel-sync-state 1\n";
  if (!text.starts_with(header)) return;
  size_t at = header.size();
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    if (end == std::string::npos) break;  // a cut line: ignore it
    parse_line(std::string_view(text).substr(at, end - at));
    at = end + 1;
  }
}

void SyncState::take_in() {
  if (updates_.empty()) return;
  for (Batch& batch : updates_) {
    Folder& folder = folders_[batch.folder];
    if (batch.folder_times) folder.times = batch.folder_times;
    for (auto& [name, times] : batch.files) folder.files[name] = times;
  }
  updates_.clear();
  unsaved_ = true;
}

void SyncState::save(const std::filesystem::path& mirrored) {
  take_in();
  if (!unsaved_) return;
  unsaved_ = false;
  std::string text = "nsel-sync-state 1\n";
  // A line per entry: a path with a newline would read back as another file's entry, so it is
  // left out, and what it names is checked against its copy on every pass instead.
  const auto one_line = [](const std::string& part) {
    return part.find('\n') == std::string::npos;
  };
  for (const auto& [path, folder] : folders_) {
    if (!one_line(path)) continue;
    if (folder.times) append_line(text, 'D', *folder.times, path, "");
    for (const auto& [name, times] : folder.files) {
      if (one_line(name)) append_line(text, 'F', times, path, name);
    }
  }
  if (!own_state_folder(mirrored)) return;
  try {
    write_file_atomically(mirrored / kFileName, text);
  } catch (const Error&) {
    // Not written: the next pass checks the copies themselves, which only costs time.
  }
}

const SyncState::Folder* SyncState::folder(const std::string& relative) const {
  const auto found = folders_.find(relative);
  return found == folders_.end() ? nullptr : &found->second;
}

void SyncState::merge(Batch& batch) {
  if (!batch.folder_times && batch.files.empty()) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  updates_.push_back(std::move(batch));
}

void SyncState::parse_line(std::string_view line) {
  // "<F|D> <size> <seconds> <nanoseconds> <path>"
  if (line.size() < 2 || line[1] != ' ') return;
  const char kind = line[0];
  Times times;
  std::string_view rest = line.substr(2);
  for (long long* field : {&times.size, &times.seconds, &times.nanoseconds}) {
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), *field);
    if (ec != std::errc() || end == rest.data() + rest.size() || *end != ' ') return;
    rest = rest.substr(static_cast<size_t>(end - rest.data()) + 1);
  }
  if (kind == 'D') {
    folders_[std::string(rest)].times = times;
  } else if (kind == 'F') {
    const size_t slash = rest.rfind('/');
    const size_t name_at = slash == std::string_view::npos ? 0 : slash + 1;
    folders_[std::string(rest.substr(0, name_at))].files.emplace(rest.substr(name_at), times);
  }
}

void SyncState::append_line(std::string& text, char kind, const Times& times,
                            const std::string& folder, const std::string& name) {
  text += kind;
  text += ' ';
  text += std::to_string(times.size);
  text += ' ';
  text += std::to_string(times.seconds);
  text += ' ';
  text += std::to_string(times.nanoseconds);
  text += ' ';
  text += folder;
  text += name;
  text += '\n';
}

SyncState::Times times_of(const struct stat& st) {
  return {static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
          static_cast<long long>(st.st_mtim.tv_nsec)};
}

}  // namespace nsel::sync_detail
