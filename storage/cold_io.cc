#include "storage/cold_io.h"

#include <pthread.h>

#include <utility>

namespace strata {

ColdIo::ColdIo(ColdStore* store, std::string thread_name, std::string gc_name, Completion done)
    : store_(store), done_(std::move(done)) {
  thread_ = std::thread([this, name = std::move(thread_name)] {
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    Run();
  });
  gc_thread_ = std::thread([this, name = std::move(gc_name)] {
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    RunGc();
  });
}

ColdIo::~ColdIo() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  gc_cv_.notify_one();
  thread_.join();
  gc_thread_.join();
}

void ColdIo::Submit(std::unique_ptr<ColdJob> job) {
  queued_bytes_.fetch_add(job->bytes, std::memory_order_relaxed);
  queued_jobs_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (job->kind == ColdJob::Kind::kGc) {
      gc_.push_back(std::move(job));
      gc_cv_.notify_one();
      return;
    }
    if (job->kind == ColdJob::Kind::kRead) {
      reads_.push_back(std::move(job));
    } else {
      others_.push_back(std::move(job));
    }
  }
  cv_.notify_one();
}

void ColdIo::RunGc() {
  while (true) {
    std::unique_ptr<ColdJob> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      gc_cv_.wait(lock, [&] { return stop_ || !gc_.empty(); });
      if (stop_) {
        size_t n = gc_.size();
        gc_.clear();
        queued_jobs_.fetch_sub(n, std::memory_order_relaxed);
        return;
      }
      job = std::move(gc_.front());
      gc_.pop_front();
    }
    Finish(std::move(job));
  }
}

void ColdIo::Finish(std::unique_ptr<ColdJob> job) {
  Execute(*job);
  queued_bytes_.fetch_sub(job->bytes, std::memory_order_relaxed);
  queued_jobs_.fetch_sub(1, std::memory_order_relaxed);
  done_(std::move(job));
}

void ColdIo::Run() {
  while (true) {
    std::unique_ptr<ColdJob> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !reads_.empty() || !others_.empty(); });
      if (!reads_.empty()) {
        job = std::move(reads_.front());
        reads_.pop_front();
      } else if (!others_.empty()) {
        job = std::move(others_.front());
        others_.pop_front();
      } else {
        return;  // stopping, and nothing is left
      }
    }
    Finish(std::move(job));
  }
}

void ColdIo::Execute(ColdJob& job) {
  switch (job.kind) {
    case ColdJob::Kind::kRead:
      job.status = store_->MultiGet(job.seqs, &job.values, job.fill_cache);
      break;
    case ColdJob::Kind::kWrite:
      job.status = store_->Write(job.writes);
      break;
    case ColdJob::Kind::kCheckpoint:
      job.status = store_->Checkpoint(job.dir);
      break;
    case ColdJob::Kind::kFlush:
      job.status = store_->FlushMemtables();
      break;
    case ColdJob::Kind::kGc:
      job.status = store_->CollectGarbage(job.gc_dead_fraction, &job.gc_files);
      break;
  }
}

}  // namespace strata
